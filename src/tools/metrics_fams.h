/* SPDX-License-Identifier: MIT */
/* metrics_fams.h - the metric families (metrics.h), one line each:
 * F(ID, name, TYPE, unit, labels, help, source columns).  Names, units and
 * labels of node_exporter (collector/cpu_linux.go, stat_linux.go,
 * loadavg.go, schedstat_linux.go, pressure_linux.go, meminfo_linux.go, diskstats_*.go, netdev_*.go) and of the libvirt exporter
 * (kumina/libvirt_exporter, Debian's prometheus-libvirt-exporter; vCPU and
 * memory-statistics names of its successor Tinkoff/libvirt-exporter) where
 * they have the same quantity; vmsampler_* for the rest.  Included by
 * metrics.c only. */
/* clang-format off */
/* ---- the host: /proc/stat ---- */
F(NODE_CPU, "node_cpu_seconds", COUNTER, "seconds", "cpu,mode",
  "Seconds the CPUs spent in each mode.", "cpu.N.{user,nice,system,idle,iowait,irq,softirq,steal} / USER_HZ")
F(NODE_CPU_GUEST, "node_cpu_guest_seconds", COUNTER, "seconds", "cpu,mode",
  "Seconds the CPUs spent in guests (VMs) for each mode.", "cpu.N.guest (mode user), cpu.N.guest_nice (mode nice) / USER_HZ")
F(CPU_ALL, "vmsampler_cpu_all_seconds", COUNTER, "seconds", "mode",
  "Seconds all CPUs together spent in each mode (the cpu line of /proc/stat).", "cpu.all.* / USER_HZ")
F(NODE_CTXT, "node_context_switches", COUNTER, "", "",
  "Total number of context switches.", "stat.ctxt")
F(NODE_INTR, "node_intr", COUNTER, "", "",
  "Total number of interrupts serviced.", "stat.intr")
F(NODE_FORKS, "node_forks", COUNTER, "", "",
  "Total number of forks.", "stat.processes")
F(SOFTIRQS, "vmsampler_softirqs", COUNTER, "", "",
  "Total number of softirqs serviced, all vectors (the softirq line of /proc/stat).", "stat.softirq")
/* ---- /proc/softirqs and /proc/interrupts (the irq source) ---- */
F(NODE_SOFTIRQS, "node_softirqs", COUNTER, "", "vector",
  "Number of softirq calls.", "softirq.all.VECTOR (vector: node_exporter's lower-case name, IRQ_POLL block_iopoll)")
F(NODE_SOFTIRQS_CPU, "node_softirqs_functions", COUNTER, "", "cpu,type",
  "Softirq counts per CPU.", "softirq.N.VECTOR")
F(INTR_ALL, "vmsampler_interrupts_all", COUNTER, "", "type",
  "Interrupts of one vector on every CPU (/proc/interrupts; type: the line's name, sum: every vector).",
  "intr.all.VECTOR, intr.all.sum")
F(INTR_CPU, "vmsampler_interrupts", COUNTER, "", "cpu,type",
  "Interrupts of one vector on one CPU (/proc/interrupts; type sum: every vector).", "intr.N.VECTOR, intr.N.sum")
/* ---- /proc/schedstat (the schedstat source; node_exporter's schedstat collector) ---- */
F(NODE_SCHED_RUNNING, "node_schedstat_running_seconds", COUNTER, "seconds", "cpu",
  "Number of seconds CPU spent running a process.", "sched.N.time / 1e9")
F(NODE_SCHED_WAITING, "node_schedstat_waiting_seconds", COUNTER, "seconds", "cpu",
  "Number of seconds spent by processing waiting for this CPU.", "sched.N.delay / 1e9")
F(NODE_SCHED_TIMESLICES, "node_schedstat_timeslices", COUNTER, "", "cpu",
  "Number of timeslices executed by CPU.", "sched.N.slices")
/* ---- the same wait from the interference program (BPF): also where the kernel has no /proc/schedstat ---- */
F(RQ_DELAY, "vmsampler_cpu_run_queue_waiting_seconds", COUNTER, "seconds", "cpu",
  "Seconds tasks waited on this CPU's run queue, measured by vmsampler's BPF program (each task's run delay at its "
  "switch-out; node_schedstat_waiting_seconds_total where the kernel has /proc/schedstat).", "rq.N.delay / 1e9")
F(NODE_PROCS_RUNNING, "node_procs_running", GAUGE, "", "",
  "Number of processes in runnable state.", "stat.procs_running")
F(NODE_PROCS_BLOCKED, "node_procs_blocked", GAUGE, "", "",
  "Number of processes blocked waiting for I/O to complete.", "stat.procs_blocked")
/* ---- /proc/loadavg ---- */
F(NODE_LOAD1, "node_load1", GAUGE, "", "", "1m load average.", "load.1m")
F(NODE_LOAD5, "node_load5", GAUGE, "", "", "5m load average.", "load.5m")
F(NODE_LOAD15, "node_load15", GAUGE, "", "", "15m load average.", "load.15m")
F(LOAD_RUNNABLE, "vmsampler_loadavg_runnable", GAUGE, "", "",
  "Runnable scheduling entities (the fourth field of /proc/loadavg, before the slash).", "load.runnable")
F(LOAD_TASKS, "vmsampler_loadavg_tasks", GAUGE, "", "",
  "Scheduling entities that exist (the fourth field of /proc/loadavg, after the slash).", "load.tasks")
/* ---- /proc/pressure (PSI): node_exporter's pressure collector names
 * some as "waiting" and full as "stalled"; it has no cpu full nor irq ---- */
F(NODE_PSI_CPU_SOME, "node_pressure_cpu_waiting_seconds", COUNTER, "seconds", "",
  "Total time in seconds that processes have waited for CPU time", "psi.cpu.some.total / 1e6")
F(PSI_CPU_FULL, "vmsampler_pressure_cpu_stalled_seconds", COUNTER, "seconds", "",
  "Total time in seconds no non-idle process could run for lack of CPU (PSI cpu full).", "psi.cpu.full.total / 1e6")
F(NODE_PSI_IO_SOME, "node_pressure_io_waiting_seconds", COUNTER, "seconds", "",
  "Total time in seconds that processes have waited due to IO congestion", "psi.io.some.total / 1e6")
F(NODE_PSI_IO_FULL, "node_pressure_io_stalled_seconds", COUNTER, "seconds", "",
  "Total time in seconds no process could make progress due to IO congestion", "psi.io.full.total / 1e6")
F(NODE_PSI_MEM_SOME, "node_pressure_memory_waiting_seconds", COUNTER, "seconds", "",
  "Total time in seconds that processes have waited for memory", "psi.memory.some.total / 1e6")
F(NODE_PSI_MEM_FULL, "node_pressure_memory_stalled_seconds", COUNTER, "seconds", "",
  "Total time in seconds no process could make progress due to memory congestion", "psi.memory.full.total / 1e6")
F(PSI_IRQ_FULL, "node_pressure_irq_stalled_seconds", COUNTER, "seconds", "",
  "Total time in seconds no process could run because the CPU was busy with interrupts (PSI irq full).",
  "psi.irq.full.total / 1e6")
/* ---- /proc/meminfo: node_exporter's meminfo collector, every field a
 * gauge named after /proc/meminfo ("Active(anon)" as Active_anon, as the
 * mem source names its columns), the kB fields in bytes with _bytes, the
 * HugePages_ counts without; a field not listed here stays unmapped ---- */
#define MEMB(k) F(NODE_MEM_##k, "node_memory_" #k "_bytes", GAUGE, "bytes", "", \
		  "Memory information field " #k "_bytes.", "mem." #k)
#define MEMN(k) F(NODE_MEM_##k, "node_memory_" #k, GAUGE, "", "", "Memory information field " #k ".", "mem." #k)
MEMB(MemTotal)
MEMB(MemFree)
MEMB(MemAvailable)
MEMB(Buffers)
MEMB(Cached)
MEMB(SwapCached)
MEMB(Active)
MEMB(Inactive)
MEMB(Active_anon)
MEMB(Inactive_anon)
MEMB(Active_file)
MEMB(Inactive_file)
MEMB(Unevictable)
MEMB(Mlocked)
MEMB(HighTotal)
MEMB(HighFree)
MEMB(LowTotal)
MEMB(LowFree)
MEMB(MmapCopy)
MEMB(SwapTotal)
MEMB(SwapFree)
MEMB(Zswap)
MEMB(Zswapped)
MEMB(Dirty)
MEMB(Writeback)
MEMB(AnonPages)
MEMB(Mapped)
MEMB(Shmem)
MEMB(KReclaimable)
MEMB(Slab)
MEMB(SReclaimable)
MEMB(SUnreclaim)
MEMB(KernelStack)
MEMB(ShadowCallStack)
MEMB(PageTables)
MEMB(SecPageTables)
MEMB(Quicklists)
MEMB(NFS_Unstable)
MEMB(Bounce)
MEMB(WritebackTmp)
MEMB(CommitLimit)
MEMB(Committed_AS)
MEMB(VmallocTotal)
MEMB(VmallocUsed)
MEMB(VmallocChunk)
MEMB(Percpu)
MEMB(HardwareCorrupted)
MEMB(AnonHugePages)
MEMB(ShmemHugePages)
MEMB(ShmemPmdMapped)
MEMB(FileHugePages)
MEMB(FilePmdMapped)
MEMB(CmaTotal)
MEMB(CmaFree)
MEMB(Unaccepted)
MEMB(Balloon)
MEMB(Hugepagesize)
MEMB(Hugetlb)
MEMB(DirectMap4k)
MEMB(DirectMap2M)
MEMB(DirectMap4M)
MEMB(DirectMap1G)
MEMN(HugePages_Total)
MEMN(HugePages_Free)
MEMN(HugePages_Rsvd)
MEMN(HugePages_Surp)
#undef MEMB
#undef MEMN
/* ---- /proc/vmstat: node_exporter's vmstat collector, node_vmstat_KEY
 * (untyped, no suffix) for every key the vmstat source reads ---- */
F(NODE_VMSTAT, "node_vmstat", UNTYPED, "", "",
  "/proc/vmstat information field KEY (the family is node_vmstat_KEY).", "vmstat.KEY")
/* ---- /proc/diskstats ---- */
F(DISK_RD_IOS, "node_disk_reads_completed", COUNTER, "", "device",
  "The total number of reads completed successfully.", "disk.DEV.rd_ios")
F(DISK_RD_MERGES, "node_disk_reads_merged", COUNTER, "", "device",
  "The total number of reads merged.", "disk.DEV.rd_merges")
F(DISK_RD_BYTES, "node_disk_read_bytes", COUNTER, "bytes", "device",
  "The total number of bytes read successfully.", "disk.DEV.rd_sectors * 512")
F(DISK_RD_TIME, "node_disk_read_time_seconds", COUNTER, "seconds", "device",
  "The total number of seconds spent by all reads.", "disk.DEV.rd_ticks / 1000")
F(DISK_WR_IOS, "node_disk_writes_completed", COUNTER, "", "device",
  "The total number of writes completed successfully.", "disk.DEV.wr_ios")
F(DISK_WR_MERGES, "node_disk_writes_merged", COUNTER, "", "device",
  "The number of writes merged.", "disk.DEV.wr_merges")
F(DISK_WR_BYTES, "node_disk_written_bytes", COUNTER, "bytes", "device",
  "The total number of bytes written successfully.", "disk.DEV.wr_sectors * 512")
F(DISK_WR_TIME, "node_disk_write_time_seconds", COUNTER, "seconds", "device",
  "This is the total number of seconds spent by all writes.", "disk.DEV.wr_ticks / 1000")
F(DISK_IO_NOW, "node_disk_io_now", GAUGE, "", "device",
  "The number of I/Os currently in progress.", "disk.DEV.in_flight")
F(DISK_IO_TIME, "node_disk_io_time_seconds", COUNTER, "seconds", "device",
  "Total seconds spent doing I/Os.", "disk.DEV.io_ticks / 1000")
F(DISK_IO_WEIGHTED, "node_disk_io_time_weighted_seconds", COUNTER, "seconds", "device",
  "The weighted # of seconds spent doing I/Os.", "disk.DEV.time_in_queue / 1000")
F(DISK_DC_IOS, "node_disk_discards_completed", COUNTER, "", "device",
  "The total number of discards completed successfully.", "disk.DEV.dc_ios")
F(DISK_DC_MERGES, "node_disk_discards_merged", COUNTER, "", "device",
  "The total number of discards merged.", "disk.DEV.dc_merges")
F(DISK_DC_SECTORS, "node_disk_discarded_sectors", COUNTER, "", "device",
  "The total number of sectors discarded successfully.", "disk.DEV.dc_sectors")
F(DISK_DC_TIME, "node_disk_discard_time_seconds", COUNTER, "seconds", "device",
  "This is the total number of seconds spent by all discards.", "disk.DEV.dc_ticks / 1000")
F(DISK_FL_IOS, "node_disk_flush_requests", COUNTER, "", "device",
  "The total number of flush requests completed successfully", "disk.DEV.fl_ios")
F(DISK_FL_TIME, "node_disk_flush_requests_time_seconds", COUNTER, "seconds", "device",
  "This is the total number of seconds spent by all flush requests.", "disk.DEV.fl_ticks / 1000")
/* ---- /proc/net/dev ---- */
F(NET_RX_BYTES, "node_network_receive_bytes", COUNTER, "bytes", "device",
  "Network device statistic receive_bytes.", "net.IF.rx_bytes")
F(NET_RX_PACKETS, "node_network_receive_packets", COUNTER, "", "device",
  "Network device statistic receive_packets.", "net.IF.rx_packets")
F(NET_RX_ERRS, "node_network_receive_errs", COUNTER, "", "device",
  "Network device statistic receive_errs.", "net.IF.rx_errs")
F(NET_RX_DROP, "node_network_receive_drop", COUNTER, "", "device",
  "Network device statistic receive_drop.", "net.IF.rx_drop")
F(NET_RX_FIFO, "node_network_receive_fifo", COUNTER, "", "device",
  "Network device statistic receive_fifo.", "net.IF.rx_fifo")
F(NET_RX_FRAME, "node_network_receive_frame", COUNTER, "", "device",
  "Network device statistic receive_frame.", "net.IF.rx_frame")
F(NET_RX_COMPRESSED, "node_network_receive_compressed", COUNTER, "", "device",
  "Network device statistic receive_compressed.", "net.IF.rx_compressed")
F(NET_RX_MULTICAST, "node_network_receive_multicast", COUNTER, "", "device",
  "Network device statistic receive_multicast.", "net.IF.rx_multicast")
F(NET_TX_BYTES, "node_network_transmit_bytes", COUNTER, "bytes", "device",
  "Network device statistic transmit_bytes.", "net.IF.tx_bytes")
F(NET_TX_PACKETS, "node_network_transmit_packets", COUNTER, "", "device",
  "Network device statistic transmit_packets.", "net.IF.tx_packets")
F(NET_TX_ERRS, "node_network_transmit_errs", COUNTER, "", "device",
  "Network device statistic transmit_errs.", "net.IF.tx_errs")
F(NET_TX_DROP, "node_network_transmit_drop", COUNTER, "", "device",
  "Network device statistic transmit_drop.", "net.IF.tx_drop")
F(NET_TX_FIFO, "node_network_transmit_fifo", COUNTER, "", "device",
  "Network device statistic transmit_fifo.", "net.IF.tx_fifo")
F(NET_TX_COLLS, "node_network_transmit_colls", COUNTER, "", "device",
  "Network device statistic transmit_colls.", "net.IF.tx_colls")
F(NET_TX_CARRIER, "node_network_transmit_carrier", COUNTER, "", "device",
  "Network device statistic transmit_carrier.", "net.IF.tx_carrier")
F(NET_TX_COMPRESSED, "node_network_transmit_compressed", COUNTER, "", "device",
  "Network device statistic transmit_compressed.", "net.IF.tx_compressed")
/* ---- perf_event ---- */
F(PERF_EVENTS, "vmsampler_perf_events", COUNTER, "", "cpu,event",
  "Host-wide perf_event count on one CPU, unscaled (task-clock and cpu-clock in ns).", "perf.cpuN.EVENT")
F(PERF_ALL_EVENTS, "vmsampler_perf_all_events", COUNTER, "", "event",
  "Host-wide perf_event count summed over the CPUs, unscaled.", "perf.all.EVENT")
F(PERF_ENABLED, "vmsampler_perf_time_enabled_seconds", COUNTER, "seconds", "cpu,group",
  "Time a CPU's perf_event group (sw, tp, hw) was enabled.", "perf.cpuN.[tp_|hw_]time_enabled / 1e9")
F(PERF_RUNNING, "vmsampler_perf_time_running_seconds", COUNTER, "seconds", "cpu,group",
  "Time a CPU's perf_event group (sw, tp, hw) was counting (less than enabled: multiplexed).",
  "perf.cpuN.[tp_|hw_]time_running / 1e9")
F(PERF_ALL_ENABLED, "vmsampler_perf_all_time_enabled_seconds", COUNTER, "seconds", "group",
  "Time the CPUs' perf_event groups were enabled, summed.", "perf.all.[tp_|hw_]time_enabled / 1e9")
F(PERF_ALL_RUNNING, "vmsampler_perf_all_time_running_seconds", COUNTER, "seconds", "group",
  "Time the CPUs' perf_event groups were counting, summed.", "perf.all.[tp_|hw_]time_running / 1e9")
/* ---- libvirt, per host ---- */
F(DOMAINS, "libvirt_domains", GAUGE, "", "",
  "Number of domains.", "virt.domains (running VMs in the frame)")
F(LV_CONNECTED, "vmsampler_libvirt_connected", GAUGE, "", "",
  "1 while vmsampler's agent is connected to libvirt, else 0.", "virt.connected")
F(LV_RESTARTS, "vmsampler_libvirt_agent_restarts", COUNTER, "", "",
  "Times vmsampler's libvirt agent was restarted.", "virt.agent_restarts")
/* ---- per VM: labels domain (vmsampler's column name of the VM) and uuid ---- */
F(DOM_STATE, "libvirt_domain_info_state", GAUGE, "", "domain,uuid,state_desc",
  "Code of the domain state (one series, the current state's, with its description).", "vm.NAME.state")
F(DOM_PATH, "vmsampler_domain_value_path", GAUGE, "", "domain,uuid",
  "Where the VM's values of this frame came from (bits, see vmsampler(1) vm.NAME.path).", "vm.NAME.path")
F(DOM_CPU, "libvirt_domain_info_cpu_time_seconds", COUNTER, "seconds", "domain,uuid",
  "Amount of CPU time used by the domain, in seconds.", "vm.NAME.cpu_time / 1e9")
F(DOM_CPU_USER, "vmsampler_domain_cpu_user_seconds", COUNTER, "seconds", "domain,uuid",
  "User CPU time of the domain's QEMU (libvirt cpu.user).", "vm.NAME.cpu_user / 1e9")
F(DOM_CPU_SYSTEM, "vmsampler_domain_cpu_system_seconds", COUNTER, "seconds", "domain,uuid",
  "System CPU time of the domain's QEMU (libvirt cpu.system).", "vm.NAME.cpu_system / 1e9")
F(DOM_VCPU_TIME, "libvirt_domain_vcpu_time_seconds", COUNTER, "seconds", "domain,uuid,vcpu",
  "Amount of CPU time used by the domain's VCPU, in seconds.", "vm.NAME.vcpuK.time / 1e9")
F(DOM_VCPU_DELAY, "libvirt_domain_vcpu_delay_seconds", COUNTER, "seconds", "domain,uuid,vcpu",
  "Time the vcpu thread was enqueued by the host scheduler, but was waiting in the queue instead of running.",
  "vm.NAME.vcpuK.delay / 1e9")
F(DOM_VCPU_PCPU, "vmsampler_domain_vcpu_cpu", GAUGE, "", "domain,uuid,vcpu",
  "Host CPU the vCPU thread last ran on.", "vm.NAME.vcpuK.pcpu (held)")
F(DOM_VCPU_ALLOWED, "vmsampler_domain_vcpu_allowed_cpus", GAUGE, "", "domain,uuid,vcpu",
  "Host CPUs the vCPU thread's affinity allows (1: pinned).", "vm.NAME.vcpuK.allowed (held)")
F(DOM_VCPU_ALLOWED_FIRST, "vmsampler_domain_vcpu_allowed_first_cpu", GAUGE, "", "domain,uuid,vcpu",
  "Lowest host CPU the vCPU thread's affinity allows.", "vm.NAME.vcpuK.allowed_first (held)")
F(DOM_INTF_WAIT, "vmsampler_domain_interference_wait_seconds", COUNTER, "seconds", "domain,uuid",
  "Run delay of the domain's vCPUs the interference program saw.", "vm.NAME.intf.wait / 1e9")
F(DOM_INTF_BEHIND, "vmsampler_domain_interference_seconds", COUNTER, "seconds", "domain,uuid,behind",
  "Of that wait, the time behind other VMs, the VM's own threads, host processes, the kernel, or not placed.",
  "vm.NAME.intf.{vms,own,host,kernel,unknown} / 1e9")
F(DOM_INTF_BY, "vmsampler_domain_interference_by_vm_seconds", COUNTER, "seconds", "domain,uuid,other",
  "Of that wait, the time behind one other VM (other: its name); the top N of the domain (export --interference-top).",
  "vm.NAME.intf.by.OTHER / 1e9")
F(DOM_INTF_BY_OTHER, "vmsampler_domain_interference_by_other_vms_seconds", COUNTER, "seconds", "domain,uuid",
  "Of that wait, the time behind the other VMs that are not among the domain's top N.",
  "the sum of vm.NAME.intf.by.OTHER beyond the top N / 1e9")
F(DOM_INTF_BY_CGROUP, "vmsampler_domain_interference_by_cgroup_seconds", COUNTER, "seconds", "domain,uuid,cgroup",
  "Of that wait, the time behind host processes of one of the host's top cgroups (cgroup: its path under the "
  "cgroup2 mount, / the root), since the sampler named it (sources.interference.host_cgroups, default 5).",
  "vm.NAME.intf.host.CGROUP / 1e9")
F(DOM_INTF_BY_OTHER_CGROUPS, "vmsampler_domain_interference_by_other_cgroups_seconds", COUNTER, "seconds",
  "domain,uuid", "Of that wait, the time behind host processes of the cgroups not named.",
  "vm.NAME.intf.host_other / 1e9")
F(DOM_INTF_IRQ_EST, "vmsampler_domain_interference_irq_estimate_seconds", COUNTER, "seconds", "domain,uuid",
  "Of that wait, an estimate of the interrupt and softirq time inside its parts (not besides them).",
  "vm.NAME.intf.irq_est / 1e9")
/* ---- per VM: the interference estimated without BPF (the intfest source) ---- */
F(DOM_INTFEST_WAIT, "vmsampler_domain_interference_estimate_wait_seconds", COUNTER, "seconds", "domain,uuid",
  "Run delay of the domain's vCPUs (schedstat) that the estimate without BPF splits.", "vm.NAME.intfest.wait / 1e9")
F(DOM_INTFEST_BEHIND, "vmsampler_domain_interference_estimate_seconds", COUNTER, "seconds", "domain,uuid,behind",
  "Of that wait, the time estimated behind other VMs, the VM's own threads, host tasks, interrupts and softirqs, "
  "or not placed.", "vm.NAME.intfest.{vms,own,host,irq,unknown} / 1e9")
F(DOM_INTFEST_BY, "vmsampler_domain_interference_estimate_by_vm_seconds", COUNTER, "seconds", "domain,uuid,other",
  "Of that wait, the time estimated behind one other VM (other: its name); the top N of the domain "
  "(export --interference-top).", "vm.NAME.intfest.by.OTHER / 1e9")
F(DOM_INTFEST_BY_OTHER, "vmsampler_domain_interference_estimate_by_other_vms_seconds", COUNTER, "seconds",
  "domain,uuid", "Of that wait, the time estimated behind the other VMs that are not among the domain's top N.",
  "the sum of vm.NAME.intfest.by.OTHER beyond the top N / 1e9")
F(DOM_VCPU_SLICES, "vmsampler_domain_vcpu_slices", COUNTER, "", "domain,uuid,vcpu",
  "Time slices the vCPU thread ran (its schedstat).", "vm.NAME.vcpuK.slices")
F(DOM_NET_RX_BYTES, "libvirt_domain_interface_stats_receive_bytes", COUNTER, "bytes",
  "domain,uuid,target_device", "Number of bytes received on a network interface, in bytes.",
  "vm.NAME.net.TAP.rx_bytes")
F(DOM_NET_RX_PACKETS, "libvirt_domain_interface_stats_receive_packets", COUNTER, "",
  "domain,uuid,target_device", "Number of packets received on a network interface.",
  "vm.NAME.net.TAP.rx_packets")
F(DOM_NET_RX_ERRS, "libvirt_domain_interface_stats_receive_errors", COUNTER, "",
  "domain,uuid,target_device", "Number of packet receive errors on a network interface.",
  "vm.NAME.net.TAP.rx_errs")
F(DOM_NET_RX_DROP, "libvirt_domain_interface_stats_receive_drops", COUNTER, "",
  "domain,uuid,target_device", "Number of packet receive drops on a network interface.",
  "vm.NAME.net.TAP.rx_drop")
F(DOM_NET_TX_BYTES, "libvirt_domain_interface_stats_transmit_bytes", COUNTER, "bytes",
  "domain,uuid,target_device", "Number of bytes transmitted on a network interface, in bytes.",
  "vm.NAME.net.TAP.tx_bytes")
F(DOM_NET_TX_PACKETS, "libvirt_domain_interface_stats_transmit_packets", COUNTER, "",
  "domain,uuid,target_device", "Number of packets transmitted on a network interface.",
  "vm.NAME.net.TAP.tx_packets")
F(DOM_NET_TX_ERRS, "libvirt_domain_interface_stats_transmit_errors", COUNTER, "",
  "domain,uuid,target_device", "Number of packet transmit errors on a network interface.",
  "vm.NAME.net.TAP.tx_errs")
F(DOM_NET_TX_DROP, "libvirt_domain_interface_stats_transmit_drops", COUNTER, "",
  "domain,uuid,target_device", "Number of packet transmit drops on a network interface.",
  "vm.NAME.net.TAP.tx_drop")
F(DOM_IO_READ, "vmsampler_domain_io_read_bytes", COUNTER, "bytes", "domain,uuid",
  "Storage bytes read by the domain's QEMU process (/proc/PID/io read_bytes).", "vm.NAME.io.read_bytes")
F(DOM_IO_WRITE, "vmsampler_domain_io_write_bytes", COUNTER, "bytes", "domain,uuid",
  "Storage bytes written by the domain's QEMU process (/proc/PID/io write_bytes).", "vm.NAME.io.write_bytes")
F(DOM_CG_READ, "vmsampler_domain_cgroup_io_read_bytes", COUNTER, "bytes", "domain,uuid",
  "Bytes read by the domain's cgroup (io.stat rbytes, all devices).", "vm.NAME.io.cg_read_bytes")
F(DOM_CG_WRITE, "vmsampler_domain_cgroup_io_write_bytes", COUNTER, "bytes", "domain,uuid",
  "Bytes written by the domain's cgroup (io.stat wbytes, all devices).", "vm.NAME.io.cg_write_bytes")
F(DOM_RSS, "libvirt_domain_memory_stats_rss_bytes", GAUGE, "bytes", "domain,uuid",
  "Resident Set Size of the process running the domain. This value is in bytes", "vm.NAME.mem.rss (held)")
F(DOM_MEM_CGROUP, "vmsampler_domain_memory_cgroup_bytes", GAUGE, "bytes", "domain,uuid",
  "Memory cgroup usage of the domain (memory.current).", "vm.NAME.mem.cgroup")
/* slow values (libvirt's balloon and block groups): the last known value
 * stands until the next, vmsampler_domain_slow_age_seconds says how old */
F(DOM_MEM_CURRENT, "libvirt_domain_info_memory_usage_bytes", GAUGE, "bytes", "domain,uuid",
  "Memory usage of the domain, in bytes.", "vm.NAME.balloon.current * 1024 (held)")
F(DOM_MEM_MAX, "libvirt_domain_info_maximum_memory_bytes", GAUGE, "bytes", "domain,uuid",
  "Maximum allowed memory of the domain, in bytes.", "vm.NAME.balloon.maximum * 1024 (held)")
F(DOM_SWAP_IN, "vmsampler_domain_memory_stats_swap_in_bytes", COUNTER, "bytes", "domain,uuid",
  "Memory the guest swapped in (balloon swap_in).", "vm.NAME.balloon.swap_in * 1024 (held)")
F(DOM_SWAP_OUT, "vmsampler_domain_memory_stats_swap_out_bytes", COUNTER, "bytes", "domain,uuid",
  "Memory the guest swapped out (balloon swap_out).", "vm.NAME.balloon.swap_out * 1024 (held)")
F(DOM_MAJOR_FAULT, "libvirt_domain_memory_stats_major_fault", COUNTER, "", "domain,uuid",
  "Page faults in the guest that needed disk I/O (balloon major_fault).", "vm.NAME.balloon.major_fault (held)")
F(DOM_MINOR_FAULT, "libvirt_domain_memory_stats_minor_fault", COUNTER, "", "domain,uuid",
  "Page faults in the guest served without disk I/O (balloon minor_fault).",
  "vm.NAME.balloon.minor_fault (held)")
F(DOM_UNUSED, "libvirt_domain_memory_stats_unused_bytes", GAUGE, "bytes", "domain,uuid",
  "The amount of memory left completely unused by the system.", "vm.NAME.balloon.unused * 1024 (held)")
F(DOM_AVAILABLE, "libvirt_domain_memory_stats_available_bytes", GAUGE, "bytes", "domain,uuid",
  "The total amount of usable memory as seen by the domain.", "vm.NAME.balloon.available * 1024 (held)")
F(DOM_USABLE, "libvirt_domain_memory_stats_usable_bytes", GAUGE, "bytes", "domain,uuid",
  "How much the balloon can be inflated without pushing the guest system to swap.",
  "vm.NAME.balloon.usable * 1024 (held)")
F(DOM_LAST_UPDATE, "libvirt_domain_memory_stats_last_update_timestamp_seconds", GAUGE, "seconds",
  "domain,uuid", "When the guest last updated its balloon statistics, seconds since the epoch.",
  "vm.NAME.balloon.last_update (held)")
F(DOM_DISK_CACHES, "libvirt_domain_memory_stats_disk_caches_bytes", GAUGE, "bytes", "domain,uuid",
  "The amount of memory that can be quickly reclaimed without additional I/O.",
  "vm.NAME.balloon.disk_caches * 1024 (held)")
F(DOM_HUGETLB_ALLOC, "libvirt_domain_memory_stats_hugetlb_pgalloc", COUNTER, "", "domain,uuid",
  "Successful huge page allocations in the guest (balloon hugetlb_pgalloc).",
  "vm.NAME.balloon.hugetlb_pgalloc (held)")
F(DOM_HUGETLB_FAIL, "libvirt_domain_memory_stats_hugetlb_pgfail", COUNTER, "", "domain,uuid",
  "Failed huge page allocations in the guest (balloon hugetlb_pgfail).",
  "vm.NAME.balloon.hugetlb_pgfail (held)")
F(DOM_BALLOON_RSS, "vmsampler_domain_balloon_rss_bytes", GAUGE, "bytes", "domain,uuid",
  "Resident set size of the domain's QEMU as libvirt's balloon group gives it.",
  "vm.NAME.balloon.rss * 1024 (held)")
F(DOM_BLK_RD_REQS, "libvirt_domain_block_stats_read_requests", COUNTER, "", "domain,uuid,target_device",
  "Number of read requests from a block device.", "vm.NAME.block.DEV.rd_reqs (held)")
F(DOM_BLK_RD_BYTES, "libvirt_domain_block_stats_read_bytes", COUNTER, "bytes", "domain,uuid,target_device",
  "Number of bytes read from a block device, in bytes.", "vm.NAME.block.DEV.rd_bytes (held)")
F(DOM_BLK_RD_TIME, "libvirt_domain_block_stats_read_time_seconds", COUNTER, "seconds", "domain,uuid,target_device",
  "Amount of time spent reading from a block device, in seconds.", "vm.NAME.block.DEV.rd_times / 1e9 (held)")
F(DOM_BLK_WR_REQS, "libvirt_domain_block_stats_write_requests", COUNTER, "", "domain,uuid,target_device",
  "Number of write requests from a block device.", "vm.NAME.block.DEV.wr_reqs (held)")
F(DOM_BLK_WR_BYTES, "libvirt_domain_block_stats_write_bytes", COUNTER, "bytes", "domain,uuid,target_device",
  "Number of bytes written from a block device, in bytes.", "vm.NAME.block.DEV.wr_bytes (held)")
F(DOM_BLK_WR_TIME, "libvirt_domain_block_stats_write_time_seconds", COUNTER, "seconds", "domain,uuid,target_device",
  "Amount of time spent writing from a block device, in seconds.", "vm.NAME.block.DEV.wr_times / 1e9 (held)")
F(DOM_BLK_FL_REQS, "libvirt_domain_block_stats_flush_requests", COUNTER, "", "domain,uuid,target_device",
  "Number of flush requests from a block device.", "vm.NAME.block.DEV.fl_reqs (held)")
F(DOM_BLK_FL_TIME, "libvirt_domain_block_stats_flush_time_seconds", COUNTER, "seconds", "domain,uuid,target_device",
  "Amount of time spent flushing of a block device, in seconds.", "vm.NAME.block.DEV.fl_times / 1e9 (held)")
F(DOM_BLK_ALLOC, "libvirt_domain_block_stats_allocation", GAUGE, "", "domain,uuid,target_device",
  "Offset of the highest written sector on a block device.", "vm.NAME.block.DEV.allocation (held)")
F(DOM_BLK_CAPACITY, "libvirt_domain_block_stats_capacity_bytes", GAUGE, "bytes", "domain,uuid,target_device",
  "Logical size in bytes of the block device backing image.", "vm.NAME.block.DEV.capacity (held)")
F(DOM_BLK_PHYSICAL, "libvirt_domain_block_stats_physicalsize_bytes", GAUGE, "bytes", "domain,uuid,target_device",
  "Physical size in bytes of the container of the backing image.", "vm.NAME.block.DEV.physical (held)")
F(DOM_LV_CPU, "vmsampler_domain_libvirt_cpu_time_seconds", COUNTER, "seconds", "domain,uuid",
  "libvirt's own cpu.time of the domain (sources.libvirt.crosscheck).", "vm.NAME.lv.cpu_time / 1e9 (held)")
F(DOM_LV_CPU_USER, "vmsampler_domain_libvirt_cpu_user_seconds", COUNTER, "seconds", "domain,uuid",
  "libvirt's own cpu.user of the domain (sources.libvirt.crosscheck).", "vm.NAME.lv.cpu_user / 1e9 (held)")
F(DOM_LV_CPU_SYSTEM, "vmsampler_domain_libvirt_cpu_system_seconds", COUNTER, "seconds", "domain,uuid",
  "libvirt's own cpu.system of the domain (sources.libvirt.crosscheck).", "vm.NAME.lv.cpu_system / 1e9 (held)")
F(DOM_LV_VCPU_TIME, "vmsampler_domain_libvirt_vcpu_time_seconds", COUNTER, "seconds", "domain,uuid,vcpu",
  "libvirt's own vcpu.K.time (sources.libvirt.crosscheck).", "vm.NAME.lv.vcpuK.time / 1e9 (held)")
F(DOM_LV_VCPU_DELAY, "vmsampler_domain_libvirt_vcpu_delay_seconds", COUNTER, "seconds", "domain,uuid,vcpu",
  "libvirt's own vcpu.K.delay (sources.libvirt.crosscheck).", "vm.NAME.lv.vcpuK.delay / 1e9 (held)")
F(DOM_SLOW_T, "vmsampler_domain_slow_timestamp_seconds", GAUGE, "seconds", "domain,uuid",
  "When libvirt last returned the domain's slow values (balloon, block), seconds since the epoch.",
  "vm.NAME.slow_t / 1e9 (held)")
F(DOM_SLOW_AGE, "vmsampler_domain_slow_age_seconds", GAUGE, "seconds", "domain,uuid",
  "Age of the domain's slow values (balloon, block) at the frame's time.",
  "frame time - vm.NAME.slow_t (held), / 1e9")
F(DOM_TIMED_OUT, "libvirt_domain_timed_out", GAUGE, "", "domain,uuid",
  "1 while the domain's slow values (balloon, block) are older than 180 s (libvirt did not answer for them), else 0.",
  "frame time - vm.NAME.slow_t (held) > 180 s")
/* ---- a VM's cgroup: limits and throttling every tick, memory and
 * pressure every sources.libvirt.detail_interval (held) ---- */
F(CG_CPU_QUOTA, "vmsampler_domain_cgroup_cpu_quota_seconds", GAUGE, "seconds", "domain,uuid",
  "CPU time the domain's cgroup may use per period (cpu.max); absent when unlimited.", "vm.NAME.cg.cpu_quota_us / 1e6")
F(CG_CPU_PERIOD, "vmsampler_domain_cgroup_cpu_period_seconds", GAUGE, "seconds", "domain,uuid",
  "The domain's cgroup CPU period (cpu.max).", "vm.NAME.cg.cpu_period_us / 1e6")
F(CG_CPU_WEIGHT, "vmsampler_domain_cgroup_cpu_weight", GAUGE, "", "domain,uuid",
  "CPU weight of the domain's cgroup (cpu.weight).", "vm.NAME.cg.cpu_weight")
F(CG_CPU_SHARES, "vmsampler_domain_cgroup_cpu_shares", GAUGE, "", "domain,uuid",
  "CPU shares of the domain's cgroup (cgroup v1 cpu.shares).", "vm.NAME.cg.cpu_shares")
F(CG_PERIODS, "vmsampler_domain_cgroup_cpu_periods", COUNTER, "", "domain,uuid",
  "Enforcement periods elapsed in the domain's cgroup (cpu.stat nr_periods).", "vm.NAME.cg.nr_periods")
F(CG_THROTTLED_PERIODS, "vmsampler_domain_cgroup_cpu_throttled_periods", COUNTER, "", "domain,uuid",
  "Periods in which the domain's cgroup was throttled (cpu.stat nr_throttled).", "vm.NAME.cg.nr_throttled")
F(CG_THROTTLED, "vmsampler_domain_cgroup_cpu_throttled_seconds", COUNTER, "seconds", "domain,uuid",
  "Time the domain's cgroup was throttled (cpu.stat throttled_usec).", "vm.NAME.cg.throttled / 1e9")
F(CG_MEM_MAX, "vmsampler_domain_cgroup_memory_max_bytes", GAUGE, "bytes", "domain,uuid",
  "Memory limit of the domain's cgroup (memory.max).", "vm.NAME.cg.mem_max")
F(CG_MEM_HIGH, "vmsampler_domain_cgroup_memory_high_bytes", GAUGE, "bytes", "domain,uuid",
  "Memory throttling threshold of the domain's cgroup (memory.high).", "vm.NAME.cg.mem_high")
F(CG_MEM_EVENTS, "vmsampler_domain_cgroup_memory_events", COUNTER, "", "domain,uuid,event",
  "Memory events of the domain's cgroup (memory.events: high, max, oom, oom_kill).",
  "vm.NAME.cg.ev_{high,max,oom,oom_kill} (held)")
F(CG_ANON, "vmsampler_domain_cgroup_memory_anon_bytes", GAUGE, "bytes", "domain,uuid",
  "Anonymous memory of the domain's cgroup (memory.stat anon).", "vm.NAME.cg.anon (held)")
F(CG_FILE, "vmsampler_domain_cgroup_memory_file_bytes", GAUGE, "bytes", "domain,uuid",
  "Page cache of the domain's cgroup (memory.stat file).", "vm.NAME.cg.file (held)")
F(CG_SWAP, "vmsampler_domain_cgroup_memory_swap_bytes", GAUGE, "bytes", "domain,uuid",
  "Swap used by the domain's cgroup (memory.swap.current).", "vm.NAME.cg.swap (held)")
F(CG_PGMAJFAULT, "vmsampler_domain_cgroup_memory_pgmajfault", COUNTER, "", "domain,uuid",
  "Major page faults in the domain's cgroup (memory.stat pgmajfault).", "vm.NAME.cg.pgmajfault (held)")
F(CG_PSI_CPU_SOME, "vmsampler_domain_pressure_cpu_waiting_seconds", COUNTER, "seconds", "domain,uuid",
  "Time some of the domain's tasks waited for a CPU (its cgroup's cpu.pressure some).",
  "vm.NAME.cg.psi.cpu.some.total / 1e6 (held)")
F(CG_PSI_CPU_FULL, "vmsampler_domain_pressure_cpu_stalled_seconds", COUNTER, "seconds", "domain,uuid",
  "Time all of the domain's tasks waited for a CPU (cpu.pressure full).", "vm.NAME.cg.psi.cpu.full.total / 1e6 (held)")
F(CG_PSI_MEM_SOME, "vmsampler_domain_pressure_memory_waiting_seconds", COUNTER, "seconds", "domain,uuid",
  "Time some of the domain's tasks waited for memory (memory.pressure some).",
  "vm.NAME.cg.psi.memory.some.total / 1e6 (held)")
F(CG_PSI_MEM_FULL, "vmsampler_domain_pressure_memory_stalled_seconds", COUNTER, "seconds", "domain,uuid",
  "Time all of the domain's tasks waited for memory (memory.pressure full).",
  "vm.NAME.cg.psi.memory.full.total / 1e6 (held)")
F(CG_PSI_IO_SOME, "vmsampler_domain_pressure_io_waiting_seconds", COUNTER, "seconds", "domain,uuid",
  "Time some of the domain's tasks waited for I/O (io.pressure some).", "vm.NAME.cg.psi.io.some.total / 1e6 (held)")
F(CG_PSI_IO_FULL, "vmsampler_domain_pressure_io_stalled_seconds", COUNTER, "seconds", "domain,uuid",
  "Time all of the domain's tasks waited for I/O (io.pressure full).", "vm.NAME.cg.psi.io.full.total / 1e6 (held)")
/* ---- a VM's dirty rate (sources.libvirt.dirty_rate: held between) ---- */
F(DIRTY_STATUS, "vmsampler_domain_dirtyrate_calc_status", GAUGE, "", "domain,uuid",
  "Status of the domain's dirty-rate measurement (libvirt dirtyrate.calc_status).", "vm.NAME.dirtyrate.calc_status (held)")
F(DIRTY_START, "vmsampler_domain_dirtyrate_calc_start_time_seconds", GAUGE, "seconds", "domain,uuid",
  "When the domain's dirty-rate measurement began, seconds on QEMU's clock.",
  "vm.NAME.dirtyrate.calc_start_time (held)")
F(DIRTY_PERIOD, "vmsampler_domain_dirtyrate_calc_period_seconds", GAUGE, "seconds", "domain,uuid",
  "Length of the domain's dirty-rate measurement.", "vm.NAME.dirtyrate.calc_period (held)")
F(DIRTY_RATE, "vmsampler_domain_dirtyrate_bytes_per_second", GAUGE, "", "domain,uuid",
  "Guest memory the domain dirtied per second, as libvirt measured it.",
  "vm.NAME.dirtyrate.megabytes_per_second * 1048576 (held)")
/* ---- a VM's migration job (virDomainGetJobStats while it runs): the
 * maintained libvirt exporter's domain_job_info names where it has them ---- */
F(MIG_JOB, "libvirt_domain_job_info_type", GAUGE, "", "domain,uuid",
  "Code of the domain job type (virDomainJobType).", "vm.NAME.migration.job")
F(MIG_ELAPSED, "libvirt_domain_job_info_time_elapsed_seconds", GAUGE, "seconds", "domain,uuid",
  "Time elapsed since the start of the domain job.", "vm.NAME.migration.time_elapsed / 1000")
F(MIG_REMAINING, "libvirt_domain_job_info_time_remaining_seconds", GAUGE, "seconds", "domain,uuid",
  "Time remaining until the end of the domain job.", "vm.NAME.migration.time_remaining / 1000")
F(MIG_SETUP, "vmsampler_domain_job_setup_time_seconds", GAUGE, "seconds", "domain,uuid",
  "Time the migration took to set up.", "vm.NAME.migration.setup_time / 1000")
F(MIG_DOWNTIME_EXP, "vmsampler_domain_job_downtime_expected_seconds", GAUGE, "seconds", "domain,uuid",
  "Downtime the migration expects.", "vm.NAME.migration.downtime_expected / 1000")
F(MIG_DOWNTIME, "vmsampler_domain_job_downtime_seconds", GAUGE, "seconds", "domain,uuid",
  "Real downtime of the migration (at its end).", "vm.NAME.migration.downtime / 1000")
F(MIG_DATA_TOTAL, "libvirt_domain_job_info_data_total_bytes", GAUGE, "bytes", "domain,uuid",
  "Data total of the domain job.", "vm.NAME.migration.data_total")
F(MIG_DATA_PROCESSED, "libvirt_domain_job_info_data_processed_bytes", GAUGE, "bytes", "domain,uuid",
  "Data processed of the domain job.", "vm.NAME.migration.data_processed")
F(MIG_DATA_REMAINING, "libvirt_domain_job_info_data_remaining_bytes", GAUGE, "bytes", "domain,uuid",
  "Data remaining of the domain job.", "vm.NAME.migration.data_remaining")
F(MIG_MEM_TOTAL, "libvirt_domain_job_info_memory_total_bytes", GAUGE, "bytes", "domain,uuid",
  "Memory total of the domain job.", "vm.NAME.migration.memory_total")
F(MIG_MEM_PROCESSED, "libvirt_domain_job_info_memory_processed_bytes", GAUGE, "bytes", "domain,uuid",
  "Memory processed of the domain job.", "vm.NAME.migration.memory_processed")
F(MIG_MEM_REMAINING, "libvirt_domain_job_info_memory_remaining_bytes", GAUGE, "bytes", "domain,uuid",
  "Memory remaining of the domain job.", "vm.NAME.migration.memory_remaining")
F(MIG_MEM_BPS, "vmsampler_domain_job_memory_bytes_per_second", GAUGE, "", "domain,uuid",
  "Memory transfer rate of the migration, bytes per second.", "vm.NAME.migration.memory_bps")
F(MIG_MEM_DIRTY, "vmsampler_domain_job_memory_dirty_rate_pages_per_second", GAUGE, "", "domain,uuid",
  "Guest pages dirtied per second during the migration.", "vm.NAME.migration.memory_dirty_rate")
F(MIG_MEM_ITER, "vmsampler_domain_job_memory_iteration", GAUGE, "", "domain,uuid",
  "Passes the migration made over the guest's memory.", "vm.NAME.migration.memory_iteration")
F(MIG_PAGE_SIZE, "vmsampler_domain_job_memory_page_size_bytes", GAUGE, "bytes", "domain,uuid",
  "Page size of the migration's memory transfer.", "vm.NAME.migration.memory_page_size")
F(MIG_MEM_CONSTANT, "vmsampler_domain_job_memory_constant_pages", COUNTER, "", "domain,uuid",
  "Zero pages the migration sent as such.", "vm.NAME.migration.memory_constant")
F(MIG_MEM_NORMAL, "vmsampler_domain_job_memory_normal_pages", COUNTER, "", "domain,uuid",
  "Pages the migration transferred whole.", "vm.NAME.migration.memory_normal")
F(MIG_MEM_NORMAL_BYTES, "vmsampler_domain_job_memory_normal_bytes", COUNTER, "bytes", "domain,uuid",
  "Bytes of the pages the migration transferred whole.", "vm.NAME.migration.memory_normal_bytes")
F(MIG_POSTCOPY, "vmsampler_domain_job_memory_postcopy_requests", COUNTER, "", "domain,uuid",
  "Post-copy page requests of the migration.", "vm.NAME.migration.memory_postcopy_requests")
F(MIG_DISK_TOTAL, "vmsampler_domain_job_disk_total_bytes", GAUGE, "bytes", "domain,uuid",
  "Disk data the migration has to transfer.", "vm.NAME.migration.disk_total")
F(MIG_DISK_PROCESSED, "vmsampler_domain_job_disk_processed_bytes", GAUGE, "bytes", "domain,uuid",
  "Disk data the migration transferred.", "vm.NAME.migration.disk_processed")
F(MIG_DISK_REMAINING, "vmsampler_domain_job_disk_remaining_bytes", GAUGE, "bytes", "domain,uuid",
  "Disk data the migration has left.", "vm.NAME.migration.disk_remaining")
F(MIG_DISK_BPS, "vmsampler_domain_job_disk_bytes_per_second", GAUGE, "", "domain,uuid",
  "Disk transfer rate of the migration, bytes per second.", "vm.NAME.migration.disk_bps")
F(DOM_PERF_EVENTS, "vmsampler_domain_perf_events", COUNTER, "", "domain,uuid,event",
  "perf_event count over the threads of the domain's QEMU, unscaled.", "vm.NAME.perf.EVENT")
F(DOM_PERF_ENABLED, "vmsampler_domain_perf_time_enabled_seconds", COUNTER, "seconds", "domain,uuid,group",
  "Time the domain's perf_event group (sw, tp, hw) was enabled, summed over its threads.",
  "vm.NAME.perf.[tp_|hw_]time_enabled / 1e9")
F(DOM_PERF_RUNNING, "vmsampler_domain_perf_time_running_seconds", COUNTER, "seconds", "domain,uuid,group",
  "Time the domain's perf_event group (sw, tp, hw) was counting, summed over its threads.",
  "vm.NAME.perf.[tp_|hw_]time_running / 1e9")
/* ---- the sampler itself ---- */
F(PARSE_ERRORS, "vmsampler_parse_errors", COUNTER, "", "",
  "Malformed kernel-file lines the sampler skipped.", "vms.parse_errors")
F(MARKS, "vmsampler_marks", COUNTER, "", "",
  "Markers taken by the control socket (vmsampler mark).", "vms.marks")
F(MARKS_REFUSED, "vmsampler_marks_refused", COUNTER, "", "",
  "Markers the control socket refused.", "vms.marks_refused")
F(HOST_INFO, "vmsampler_host_info", GAUGE, "", "hostname,machine_id,boot_id,kernel,...",
  "The identity of the host the input was recorded on, as labels (always 1).",
  "the HOST record (vmsampler-format(5)): each key a label")
F(FRAME_TIME, "vmsampler_frame_timestamp_seconds", GAUGE, "seconds", "",
  "Wall time of the newest frame, seconds since the epoch.", "frame time")
F(FRAME_SEQ, "vmsampler_frame_sequence", GAUGE, "", "",
  "Sequence number of the newest frame (from 1).", "frame seq")
F(FRAME_GEN, "vmsampler_schema_generation", GAUGE, "", "",
  "Schema generation of the newest frame.", "frame gen")
F(TICK_LATE, "vmsampler_tick_late_seconds", GAUGE, "seconds", "",
  "How late after its deadline the newest frame's tick ran.", "frame late_ns / 1e9")
F(MISSED_TICKS, "vmsampler_missed_ticks", COUNTER, "", "",
  "Ticks the sampler skipped because it ran late, over the frames this exporter read.",
  "sum of frames' missed_ticks")
F(LOST_FRAMES, "vmsampler_lost_frames", COUNTER, "", "",
  "Frames the input lost before it was written (its lost_frames), over the frames this exporter read.",
  "sum of frames' lost_frames")
F(SELF_CPU, "vmsampler_self_cpu_seconds", COUNTER, "seconds", "",
  "CPU time the sampler itself used, over the frames this exporter read.", "sum of frames' self_cpu_ns / 1e9")
F(INTERVAL, "vmsampler_interval_seconds", GAUGE, "seconds", "",
  "The sampler's interval (a live ring's).", "the ring's interval")
F(EXPORT_READ, "vmsampler_export_frames_read", COUNTER, "", "",
  "Frames this exporter read.", "the reader")
F(EXPORT_MISSED, "vmsampler_export_frames_missed", COUNTER, "", "",
  "Frames overwritten in the ring before this exporter read them.", "the reader")
F(EXPORT_UNMAPPED, "vmsampler_export_unmapped_columns", GAUGE, "", "",
  "Columns of the newest frame's schema that no metric family takes (left out).", "the schema")
F(EXPORT_FILTERED, "vmsampler_export_filtered_series", GAUGE, "", "",
  "Series of the newest frame's schema left out by --include, --exclude and --no-per-cpu.", "the options")
F(EXPORT_UP, "vmsampler_export_source_up", GAUGE, "", "",
  "1 while the input brings frames; 0 when none was read for 3 intervals (at least 1 s): the "
  "sampler stopped or its file ended, and the input's own series are left out.", "the reader")
F(EXPORT_AGE, "vmsampler_export_last_frame_age_seconds", GAUGE, "seconds", "",
  "How old the newest frame is at the scrape: now less its wall time.", "the reader")
/* ---- export --remote-write (only with it, on /metrics) ---- */
F(RW_FRAMES, "vmsampler_export_rw_frames", COUNTER, "", "",
  "Frames remote write delivered (acknowledged by the receiver).", "remote write")
F(RW_SAMPLES, "vmsampler_export_rw_samples", COUNTER, "", "",
  "Samples remote write delivered, staleness markers included.", "remote write")
F(RW_STALE, "vmsampler_export_rw_stale_markers", COUNTER, "", "",
  "Staleness markers remote write delivered (series that ended).", "remote write")
F(RW_BATCHES, "vmsampler_export_rw_batches", COUNTER, "", "",
  "Remote-write requests the receiver acknowledged.", "remote write")
F(RW_RETRIES, "vmsampler_export_rw_retries", COUNTER, "", "",
  "Remote-write attempts that failed and were retried (5xx, 429, timeout, connection).", "remote write")
F(RW_FAILURES, "vmsampler_export_rw_failures", COUNTER, "", "",
  "Remote-write batches with a failure: samples refused and dropped, the receiver refusing everything (export stops), or out of retries (sent again).", "remote write")
F(RW_DROPPED, "vmsampler_export_rw_dropped_samples", COUNTER, "", "",
  "Samples the receiver refused on their own (a 400, 409 or 422 while it took others, or as older than what it has) and that were dropped.", "remote write")
F(RW_BYTES, "vmsampler_export_rw_sent_bytes", COUNTER, "bytes", "",
  "Bytes of acknowledged remote-write request bodies (snappy-compressed protobuf).", "remote write")
F(RW_LOST, "vmsampler_export_lost_frames", COUNTER, "", "",
  "Frames of the ring that remote write lost (overwritten before it read them; a ring cannot replay).",
  "remote write")
/* clang-format on */
