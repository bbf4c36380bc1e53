/* SPDX-License-Identifier: MIT */
/* vm_rec.c - the vm source's records (vm_int.h): for each VM of the VM
 * set, the kernel files opened at declare time and kept while the VM
 * lives, what the agent must send for it, and the layout of its columns;
 * reconcile() makes the records follow the VM set between ticks. */
#include <errno.h>
#include <limits.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "libexec.h"
#include "log.h"
#include "name.h"
#include "priv.h"
#include "procfile.h"
#include "source.h"
#include "virt_client.h"
#include "vm_kernel.h"
#include "vms_build.h"
#include "vm_int.h"
#include "vmtab.h"

struct vms_vmsrc_aux *vms_vmsrc_aux_find(struct vms_vmsrc *p, const char *uuid)
{
	for (unsigned i = 0; i < p->naux; i++)
		if (strcmp(p->aux[i].uuid, uuid) == 0)
			return &p->aux[i];
	return NULL;
}

/* ---- declaring ----------------------------------------------------------------- */

void vms_vmsrc_rec_free(struct vms_vmsrc_rec *r)
{
	vms_vmk_close(&r->k);
	vms_vm_clear(&r->id);
	free(r->cname);
	free(r->grp);
	free(r->pend);
	memset(r, 0, sizeof(*r));
}

static int rec_open(struct vms_source *src, struct vms_vmsrc_rec *r, const struct vms_vm *vm)
{
	struct vms_vmsrc *p = src->priv;
	memset(r, 0, sizeof(*r));
	if (vms_vm_dup(&r->id, vm) < 0)
		return -ENOMEM;
	char cn[VMS_NAME_PART_MAX + 1];
	if (vms_vm_colname(cn, vm->name))
		vms_info("VM %s: its name of %zu bytes is too long for column names: its columns are vm.%s.*",
			 vm->uuid, strlen(vm->name), cn);
	r->cname = strdup(cn);
	if (!r->cname || vms_vmk_open(&r->k, vm, src->proc_dirfd, &p->cg, p->ino_open ? p->ino : -1) < 0) {
		vms_vmsrc_rec_free(r);
		return -ENOMEM;
	}
	/* /proc/<pid>/io is 0400 and behind a ptrace check: QEMU runs as
	 * another user (libvirt-qemu) */
	static const char what[] = "the VMs' I/O counters (vm.*.io.read_bytes, write_bytes: /proc/<qemu>/io, "
				   "mode 0400 and a ptrace check) are missing";
	if (r->k.io_err == EACCES || r->k.io_err == EPERM) {
		bool said = vms_priv_missing(CAP_DAC_READ_SEARCH, what);
		if (!vms_priv_missing(CAP_SYS_PTRACE, what) && !said)
			vms_warn("VM %s: /proc/%d/io: %s; its I/O counters are missing", vm->name, (int)vm->pid,
				 strerror(r->k.io_err));
	}
	return 0;
}

/* Requests for what the kernel cannot serve (not for the agent that is
 * serving it already). */
void vms_vmsrc_rec_queue_needs(struct vms_vmsrc *p, struct vms_vmsrc_rec *r)
{
	struct vms_vmsrc_aux *a = vms_vmsrc_aux_find(p, r->id.uuid);
	uint8_t want = VMS_VG_CPU | (r->id.nvcpu ? VMS_VG_VCPU : 0) | (r->id.ntap ? VMS_VG_NET : 0);
	uint8_t missing = (uint8_t)(want & ~r->k.have & ~(a ? a->fallback : 0) & ~r->need_sent);
	if (!missing || p->cl.fd < 0)
		return;
	vms_vp_begin(&p->cl.out, VMS_VP_NEED);
	vms_vp_uuid(&p->cl.out, r->id.uuid);
	vms_vp_u8(&p->cl.out, missing);
	if (vms_vp_end(&p->cl.out) == 0)
		r->need_sent |= missing;
}

/* The column of the VM named n (sub: its vCPU, tap or disk; NULL) that is
 * field `field` of the catalogue's group g: kind and unit from there. */
static void vm_col(struct vms_schema_builder *b, struct vms_coldef *d, unsigned g, const char *n, const char *sub,
		   const char *field)
{
	unsigned f = vms_catalog_field(g, field);
	const struct vms_catfield *e = vms_catalog_entry(g, f);
	d->kind = 0;
	d->unit = 0;
	d->wrap_bits = e && e->kind == VMS_KIND_COUNTER ? 64 : 0;
	vms_schema_addc(b, d, g, n, sub, field);
}

/* The columns of the agent's metrics first..last. */
static void metric_cols(struct vms_schema_builder *b, struct vms_coldef *d, const char *n, const char *sub,
			unsigned first, unsigned last)
{
	for (unsigned m = first; m <= last; m++) {
		const struct vms_vmetric_info *mi = vms_vmetric_find(m);
		vm_col(b, d, mi->cat, n, sub, vms_vmetric_field(mi)->name);
	}
}

/* The columns of a table of the agent's metrics. */
static void metric_table(struct vms_schema_builder *b, struct vms_coldef *d, const char *n, const char *sub,
			 const struct vms_vmetric_info *t, unsigned nt)
{
	metric_cols(b, d, n, sub, t[0].id, t[nt - 1].id);
}

int vms_vmsrc_rec_declare(struct vms_schema_builder *b, struct vms_vmsrc_rec *r, const struct vms_libvirt_conf *lc)
{
	const struct vms_vm *vm = &r->id;
	struct vms_coldef d = {.key = vm->uuid};
	const char *n = r->cname;
	char idx[16];

	uint32_t old = r->pend ? r->lay.ncol : 0;
	vms_vmlay_init(&r->lay, vm->nvcpu, vm->ntap, vm->ndisk, r->k.fd_iostat >= 0, vms_vmcg_ncols(&r->k.cg),
		       lc && lc->crosscheck);
	vm_col(b, &d, VMS_G_VM, n, NULL, "state");
	vm_col(b, &d, VMS_G_VM, n, NULL, "path");
	metric_cols(b, &d, n, NULL, VMS_VM_CPU_TIME, VMS_VM_CPU_SYSTEM);
	for (unsigned i = 0; i < vm->nvcpu; i++) {
		snprintf(idx, sizeof(idx), "%u", i);
		metric_cols(b, &d, n, idx, VMS_VM_VCPU_TIME, VMS_VM_VCPU_SLICES);
	}
	char part[VMS_NAME_PART_MAX + 1];
	for (unsigned t = 0; t < vm->ntap; t++) {
		vms_name_fit(part, VMS_NAME_PART_MAX, vm->tap[t], strlen(vm->tap[t]));
		metric_cols(b, &d, n, part, VMS_VM_NET_RX_BYTES, VMS_VM_NET_TX_DROP);
	}
	metric_cols(b, &d, n, NULL, VMS_VM_IO_READ, r->lay.iocg < 0 ? VMS_VM_IO_WRITE : VMS_VM_IO_CG_WRITE);
	metric_cols(b, &d, n, NULL, VMS_VM_MEM_RSS, VMS_VM_MEM_CGROUP);
	metric_table(b, &d, n, NULL, vms_vm_balloon, VMS_VM_NBALLOON);
	for (unsigned i = 0; i < vm->ndisk; i++) {
		vms_name_fit(part, VMS_NAME_PART_MAX, vm->disk[i], strlen(vm->disk[i]));
		metric_table(b, &d, n, part, vms_vm_block, VMS_VM_NBLOCK);
	}
	for (unsigned f = 0; f < VMS_CGF_N; f++)
		if (r->k.cg.have & (1u << f))
			vm_col(b, &d, VMS_G_VMCG, n, NULL, vms_catalog[VMS_G_VMCG].fields[f].name);
	/* each vCPU's placement (vm_kernel.h): the vcpu group's gauges pcpu,
	 * allowed, allowed_first (the identity derived from the name) */
	for (unsigned i = 0; i < vm->nvcpu; i++)
		for (unsigned f = 0; f < VMS_VM_PLACE_FIELDS; f++) {
			const struct vms_coldef pd = {.kind = VMS_KIND_GAUGE,
						      .unit = f == 1 ? VMS_UNIT_COUNT : VMS_UNIT_NONE,
						      .key = vm->uuid};
			vms_schema_addf(b, &pd, "vm.%s.vcpu%u.%s", n, i, vms_vmk_place_cols[f]);
		}
	if (r->lay.check >= 0) {
		metric_cols(b, &d, n, NULL, VMS_VM_CHECK_CPU_TIME, VMS_VM_CHECK_CPU_SYSTEM);
		for (unsigned i = 0; i < vm->nvcpu; i++) {
			snprintf(idx, sizeof(idx), "%u", i);
			metric_cols(b, &d, n, idx, VMS_VM_CHECK_VCPU_TIME, VMS_VM_CHECK_VCPU_DELAY);
		}
	}
	vm_col(b, &d, VMS_G_VM, n, NULL, "slow_t");
	if (lc && lc->dirty_every_ns) {
		vms_vmlay_add_dirty(&r->lay);
		metric_table(b, &d, n, NULL, vms_vm_dirty, VMS_VM_NDIRTY);
	}
	if (r->want_mig) {
		vms_vmlay_add_mig(&r->lay);
		metric_table(b, &d, n, NULL, vms_vm_mig, VMS_VM_NMIG);
	}
	if (b->err)
		return b->err;
	if (old == r->lay.ncol)
		return 0; /* the same VM and layout: values on their way stay */
	free(r->grp);
	free(r->pend);
	r->grp = malloc(r->lay.ncol);
	r->pend = malloc(r->lay.ncol * sizeof(*r->pend));
	if (!r->grp || !r->pend)
		return -ENOMEM;
	for (uint32_t i = 0; i < r->lay.ncol; i++) {
		r->grp[i] = vms_vmlay_group(&r->lay, i);
		r->pend[i] = VMS_NONE;
	}
	r->pend_any = false;
	r->pend_slow_t = 0;
	return 0;
}

/* Make the records follow the table: keep the files of VMs whose identity
 * did not change, open those of new ones, close the others. */
int vms_vmsrc_reconcile(struct vms_source *src, const struct vms_vmtab *t)
{
	struct vms_vmsrc *p = src->priv;
	struct vms_vmsrc_rec *nr = calloc(t->n ? t->n : 1, sizeof(*nr));
	if (!nr)
		return -ENOMEM;
	for (unsigned i = 0; i < p->nrec; i++)
		p->rec[i].keep = false;
	int r = 0;
	for (unsigned i = 0; i < t->n; i++) {
		const struct vms_vm *vm = &t->vm[i];
		struct vms_vmsrc_rec *old = NULL;
		for (unsigned k = 0; k < p->nrec && !old; k++)
			if (!p->rec[k].keep && strcmp(p->rec[k].id.uuid, vm->uuid) == 0)
				old = &p->rec[k];
		if (old && vms_vm_same_files(&old->id, vm)) {
			nr[i] = *old;
			nr[i].id.state = vm->state;
			nr[i].id.reason = vm->reason;
			old->keep = true;
			continue;
		}
		r = rec_open(src, &nr[i], vm);
		if (r < 0) {
			for (unsigned k = 0; k < i; k++)
				if (!nr[k].keep)
					vms_vmsrc_rec_free(&nr[k]);
			free(nr);
			return r;
		}
		nr[i].keep = true;
	}
	for (unsigned i = 0; i < p->nrec; i++)
		if (!p->rec[i].keep)
			vms_vmsrc_rec_free(&p->rec[i]);
	free(p->rec);
	p->rec = nr;
	p->nrec = t->n;
	/* two VMs whose names clean up to the same string: the later one gets
	 * its UUID's first group appended */
	for (unsigned i = 0; i < p->nrec; i++)
		for (unsigned k = 0; k < i; k++)
			if (strcmp(p->rec[i].cname, p->rec[k].cname) == 0) {
				char *n = NULL;
				if (asprintf(&n, "%s~%.8s", p->rec[i].cname, p->rec[i].id.uuid) < 0)
					return -ENOMEM;
				free(p->rec[i].cname);
				p->rec[i].cname = n;
			}
	return 0;
}
