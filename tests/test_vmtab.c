/* SPDX-License-Identifier: MIT */
#include "testutil.h"

#include <string.h>

#include "vmtab.h"

static void test_upsert_remove(void **state)
{
	(void)state;
	pid_t tids[2] = {101, 102};
	char *taps[1] = {"vnet0"};
	char *disks[2] = {"vda", "vdb"};
	struct vms_vm vm = {
		.uuid = "6695eb01-f6a4-8304-79aa-97f2502e193f",
		.name = "web1", .state = 1, .pid = 100,
		.nvcpu = 2, .vcpu_tid = tids, .ntap = 1, .tap = taps, .ndisk = 2, .disk = disks,
	};
	struct vms_vmtab tab = {0};
	uint64_t g0 = vms_vmtab_gen(&tab);
	assert_int_equal(vms_vmtab_upsert(&tab, &vm), 1);
	assert_int_equal(vms_vmtab_gen(&tab), g0 + 1);
	/* the same again: no change, no new generation */
	assert_int_equal(vms_vmtab_upsert(&tab, &vm), 0);
	assert_int_equal(vms_vmtab_gen(&tab), g0 + 1);
	/* the table holds a copy */
	tids[1] = 999;
	const struct vms_vm *t = vms_vmtab_find(&tab, vm.uuid);
	assert_non_null(t);
	assert_int_equal(t->vcpu_tid[1], 102);
	assert_string_equal(t->disk[1], "vdb");
	assert_ptr_not_equal(t->name, vm.name);
	/* a changed thread id is a change */
	assert_int_equal(vms_vmtab_upsert(&tab, &vm), 1);
	assert_int_equal(vms_vmtab_find(&tab, vm.uuid)->vcpu_tid[1], 999);
	struct vms_vm vm2 = {.uuid = "11111111-2222-3333-4444-555555555555", .name = "db"};
	assert_int_equal(vms_vmtab_upsert(&tab, &vm2), 1);
	assert_int_equal(tab.n, 2);
	assert_int_equal(vms_vmtab_remove(&tab, vm.uuid), 1);
	assert_int_equal(vms_vmtab_remove(&tab, vm.uuid), 0);
	assert_null(vms_vmtab_find(&tab, vm.uuid));
	assert_string_equal(tab.vm[0].name, "db");
	uint64_t g = vms_vmtab_gen(&tab);
	vms_vmtab_clear(&tab);
	assert_int_equal(tab.n, 0);
	assert_true(vms_vmtab_gen(&tab) > g);
}

VMS_TEST_MAIN(NULL, NULL,
	test_upsert_remove)
