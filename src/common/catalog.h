/* SPDX-License-Identifier: MIT */
/* catalog.h - what a column is: the column catalogue.
 *
 * Every column has an identity: a group (cpu, disk, vcpu, ...), an entity
 * (the CPU number, the device, the VM's name; none for host-wide groups),
 * a sub-entity inside a VM (the vCPU index, the tap, the guest disk) and a
 * field (user, rd_ios, delay).  The catalogue below defines, once, each
 * group's name layout and each field's kind, unit and meaning; the sources
 * declare their columns by identity (vms_schema_addc), the name is built
 * from it by vms_colname(), the binary format carries the identity
 * (vmsampler-format(5), minor version 1), and the readers use it instead
 * of taking names apart.  For data written before the identity was
 * carried, vms_catalog_derive() recovers it from the name: the one place
 * that parses a column name.
 *
 * A name is  head [entity "."] mid [sub "."] field,  e.g. "vm." "web1."
 * "vcpu" "0." "delay" for group vcpu. */
#ifndef VMS_CATALOG_H
#define VMS_CATALOG_H

#include <stddef.h>
#include <stdint.h>

enum vms_group {
	VMS_G_NONE = 0, /* not in the catalogue */
	VMS_G_CPU,      /* cpu.<all|N>.<field>: /proc/stat cpu lines */
	VMS_G_STAT,     /* stat.<field>: /proc/stat totals */
	VMS_G_LOAD,     /* load.<field>: /proc/loadavg */
	VMS_G_MEM,      /* mem.<Key>: /proc/meminfo (open) */
	VMS_G_VMSTAT,   /* vmstat.<key>: /proc/vmstat (open) */
	VMS_G_PSI,      /* psi.<resource>.<field>: /proc/pressure */
	VMS_G_DISK,     /* disk.<dev>.<field>: /proc/diskstats */
	VMS_G_NET,      /* net.<iface>.<field>: /proc/net/dev */
	VMS_G_PERF,     /* perf.<all|cpuN>.<event>: perf counters (open) */
	VMS_G_VIRT,     /* virt.<field>: the libvirt agent */
	VMS_G_VMS,      /* vms.<field>: vmsampler itself */
	VMS_G_VM,       /* vm.<name>.<field> */
	VMS_G_VCPU,     /* vm.<name>.vcpu<K>.<field> */
	VMS_G_VMNET,    /* vm.<name>.net.<tap>.<field> */
	VMS_G_VMIO,     /* vm.<name>.io.<field> */
	VMS_G_VMMEM,    /* vm.<name>.mem.<field> */
	VMS_G_VMBALLOON, /* vm.<name>.balloon.<field> */
	VMS_G_VMBLOCK,  /* vm.<name>.block.<disk>.<field> */
	VMS_G_VMCG,     /* vm.<name>.cg.<field> */
	VMS_G_VMLV,     /* vm.<name>.lv.<field>: libvirt's cross-check */
	VMS_G_VMLVVCPU, /* vm.<name>.lv.vcpu<K>.<field> */
	VMS_G_VMDIRTY,  /* vm.<name>.dirtyrate.<field> */
	VMS_G_VMMIG,    /* vm.<name>.migration.<field> */
	VMS_G_VMPERF,   /* vm.<name>.perf.<event> (open) */
	VMS_G_INTR,     /* intr.<all|N>.<sum|vector>: /proc/interrupts (open) */
	VMS_G_SOFTIRQ,  /* softirq.<all|N>.<vector>: /proc/softirqs (open) */
	VMS_G_VMINTF,   /* vm.<name>.intf.<field>: interference (doc/interference.md) */
	VMS_G_VMINTFBY, /* vm.<name>.intf.by.<other VM> (open) */
	VMS_G_VMINTFHOST, /* vm.<name>.intf.host.<cgroup path> (open) */
	VMS_G_VMINTFEST, /* vm.<name>.intfest.<field>: interference estimated without BPF */
	VMS_G_VMINTFESTBY, /* vm.<name>.intfest.by.<other VM> (open) */
	VMS_G_SCHED,    /* sched.<N>.<field>: /proc/schedstat */
	VMS_G_RQ,       /* rq.<N>.<field>: a CPU's run queue, the interference program's (BPF) */
	VMS_G_N
};

/* field_id of a field that a group's table does not list (an open
 * group's: a meminfo key, a perf event), or of a column without group */
#define VMS_FIELD_OPEN 0xffffu

struct vms_catfield {
	const char *name;
	uint8_t kind; /* enum vms_kind */
	uint8_t unit; /* enum vms_unit */
	const char *desc;
};

struct vms_catgroup {
	const char *name; /* "vcpu" */
	const char *head; /* "vm." */
	const char *mid;  /* after the entity, before the sub: "vcpu", "net." */
	uint8_t entity;   /* has an entity */
	uint8_t sub;      /* has a sub-entity (1; 2: digits only) */
	uint8_t open;     /* fields outside the table exist */
	const struct vms_catfield *fields;
	uint16_t nfields;
	const char *desc;
};

/* The groups, indexed by enum vms_group (entry 0 is VMS_G_NONE's). */
extern const struct vms_catgroup vms_catalog[VMS_G_N];

/* The identity of a column.  Strings are "" when absent. */
struct vms_colid {
	uint8_t group;     /* enum vms_group */
	uint16_t field_id; /* index in the group's fields, or VMS_FIELD_OPEN */
	const char *entity, *sub, *field;
};

/* The group named `name`, or VMS_G_NONE. */
unsigned vms_catalog_group(const char *name, size_t len);
/* The index of `field` in group g's table, or VMS_FIELD_OPEN. */
unsigned vms_catalog_field(unsigned g, const char *field);
/* The catalogue's entry of an identity, or NULL (open field, no group). */
const struct vms_catfield *vms_catalog_entry(unsigned g, unsigned field_id);

/* The column name of an identity into buf (cap bytes): its length, or
 * -ENAMETOOLONG, -EINVAL (no group; an entity or sub missing or extra). */
int vms_colname(char *buf, size_t cap, unsigned group, const char *entity, const char *sub,
		const char *field);

/* Recover the identity of a column from its name (data written before
 * the identity was carried).  The parts are written into buf (cap bytes,
 * at least strlen(name) + 3) and point there; a name the catalogue does
 * not know gets group VMS_G_NONE and empty parts.  Returns the group. */
unsigned vms_catalog_derive(const char *name, struct vms_colid *id, char *buf, size_t cap);

#endif
