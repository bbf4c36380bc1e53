/* SPDX-License-Identifier: MIT */
/* vmtab.c - a table of running VMs (vmtab.h): copies, comparisons, and
 * the changes that move its generation. */
#include "vmtab.h"
#include "name.h"

#include <stdlib.h>
#include <string.h>

const struct vms_vm *vms_vmtab_find(const struct vms_vmtab *t, const char *uuid)
{
	for (unsigned i = 0; t && i < t->n; i++)
		if (strcmp(t->vm[i].uuid, uuid) == 0)
			return &t->vm[i];
	return NULL;
}

static void strv_free(char **v, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static void vm_free(struct vms_vm *vm)
{
	free(vm->name);
	free(vm->vcpu_tid);
	strv_free(vm->tap, vm->ntap);
	strv_free(vm->disk, vm->ndisk);
	memset(vm, 0, sizeof(*vm));
}

static int strv_dup(char **src, unsigned n, char ***out)
{
	*out = NULL;
	if (!n)
		return 0;
	char **v = calloc(n, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (unsigned i = 0; i < n; i++) {
		v[i] = strdup(src[i] ? src[i] : "");
		if (!v[i]) {
			strv_free(v, i);
			return -ENOMEM;
		}
	}
	*out = v;
	return 0;
}

static int vm_copy(struct vms_vm *dst, const struct vms_vm *src)
{
	memset(dst, 0, sizeof(*dst));
	memcpy(dst->uuid, src->uuid, sizeof(dst->uuid));
	dst->uuid[VMS_UUID_LEN] = '\0';
	dst->state = src->state;
	dst->reason = src->reason;
	dst->pid = src->pid;
	dst->name = strdup(src->name ? src->name : "");
	if (!dst->name)
		goto fail;
	if (src->nvcpu) {
		dst->vcpu_tid = calloc(src->nvcpu, sizeof(*dst->vcpu_tid));
		if (!dst->vcpu_tid)
			goto fail;
		memcpy(dst->vcpu_tid, src->vcpu_tid, src->nvcpu * sizeof(*dst->vcpu_tid));
		dst->nvcpu = src->nvcpu;
	}
	if (strv_dup(src->tap, src->ntap, &dst->tap) < 0)
		goto fail;
	dst->ntap = src->ntap;
	if (strv_dup(src->disk, src->ndisk, &dst->disk) < 0)
		goto fail;
	dst->ndisk = src->ndisk;
	return 0;
fail:
	vm_free(dst);
	return -ENOMEM;
}

static bool strv_eq(char **a, unsigned na, char **b, unsigned nb)
{
	if (na != nb)
		return false;
	for (unsigned i = 0; i < na; i++)
		if (strcmp(a[i], b[i] ? b[i] : "") != 0)
			return false;
	return true;
}

bool vms_vm_same_files(const struct vms_vm *a, const struct vms_vm *b)
{
	return strcmp(a->uuid, b->uuid) == 0 && strcmp(a->name, b->name ? b->name : "") == 0 &&
	       a->pid == b->pid && a->nvcpu == b->nvcpu &&
	       (a->nvcpu == 0 || memcmp(a->vcpu_tid, b->vcpu_tid, a->nvcpu * sizeof(pid_t)) == 0) &&
	       strv_eq(a->tap, a->ntap, b->tap, b->ntap) && strv_eq(a->disk, a->ndisk, b->disk, b->ndisk);
}

static bool vm_eq(const struct vms_vm *a, const struct vms_vm *b)
{
	return vms_vm_same_files(a, b) && a->state == b->state && a->reason == b->reason;
}

int vms_vm_dup(struct vms_vm *dst, const struct vms_vm *src)
{
	return vm_copy(dst, src);
}

void vms_vm_clear(struct vms_vm *vm)
{
	vm_free(vm);
}

int vms_vmtab_upsert(struct vms_vmtab *t, const struct vms_vm *vm)
{
	struct vms_vm nv;
	for (unsigned i = 0; i < t->n; i++) {
		if (strcmp(t->vm[i].uuid, vm->uuid) != 0)
			continue;
		if (vm_eq(&t->vm[i], vm))
			return 0;
		if (vm_copy(&nv, vm) < 0)
			return -ENOMEM;
		vm_free(&t->vm[i]);
		t->vm[i] = nv;
		t->gen++;
		return 1;
	}
	struct vms_vm *n = realloc(t->vm, (t->n + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	t->vm = n;
	if (vm_copy(&t->vm[t->n], vm) < 0)
		return -ENOMEM;
	t->n++;
	t->gen++;
	return 1;
}

int vms_vmtab_remove(struct vms_vmtab *t, const char *uuid)
{
	for (unsigned i = 0; i < t->n; i++) {
		if (strcmp(t->vm[i].uuid, uuid) != 0)
			continue;
		vm_free(&t->vm[i]);
		memmove(&t->vm[i], &t->vm[i + 1], (t->n - i - 1) * sizeof(t->vm[0]));
		t->n--;
		t->gen++;
		return 1;
	}
	return 0;
}

void vms_vmtab_clear(struct vms_vmtab *t)
{
	for (unsigned i = 0; i < t->n; i++)
		vm_free(&t->vm[i]);
	free(t->vm);
	uint64_t g = t->gen;
	memset(t, 0, sizeof(*t));
	t->gen = g + 1;
}

bool vms_vm_colname(char *dst, const char *name)
{
	/* fitted first, so that the hash is that of the name itself */
	bool cut = vms_name_fit(dst, VMS_NAME_PART_MAX, name, strlen(name));
	size_t n = strlen(dst) - (cut ? 17 : 0);
	for (char *c = dst; c < dst + n; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
		      strchr("_-+:@", *c)))
			*c = '_';
	return cut;
}
