/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The host's identity (common/hostid.c) from fake DMI directories made in
 * a temporary directory: EC2 Nitro (type and id), EC2 on Xen, GCP, Azure,
 * Hyper-V elsewhere and a laptop (unknown), hostile bytes, files too long,
 * FIFOs and symlinks, missing files and a missing directory; the shapes of
 * instance types and ids; MemTotal from a fake meminfo (at its bound and
 * one byte past it); the config's keys
 * over DMI.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "tmpdir.h"

#include "config.h"
#include "hostid.h"
#include "readfile.h"

static int dir_setup(void **state)
{
	return dir_make(state, "/tmp/test_hostid.XXXXXX");
}

/* A DMI file as sysfs shows it: the text and a newline (len bytes of text; -1: strlen). */
static void put_n(const struct dir *d, const char *name, const char *text, ssize_t len)
{
	char path[192];
	int fd;
	size_t n = len < 0 ? strlen(text) : (size_t)len;

	snprintf(path, sizeof(path), "%s/%s", d->path, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, n), (ssize_t)n);
	assert_int_equal(write(fd, "\n", 1), 1);
	close(fd);
}

static void put(const struct dir *d, const char *name, const char *text)
{
	put_n(d, name, text, -1);
}

static void read_ok(const struct dir *d, struct hostid *h)
{
	memset(h, 0x5a, sizeof(*h)); /* hostid_read resets everything */
	assert_int_equal(hostid_read(d->path, h), 0);
}

static void assert_unknown(const struct hostid *h)
{
	assert_string_equal(h->cloud, "");
	assert_string_equal(h->instance_type, "");
	assert_string_equal(h->instance_id, "");
	assert_string_equal(h->region, "");
	assert_int_equal(h->cloud_from, HOSTID_UNKNOWN);
	assert_int_equal(h->instance_type_from, HOSTID_UNKNOWN);
	assert_false(h->price_known);
}

/* ---- recognised clouds ------------------------------------------------ */

static void ec2_nitro_gives_the_instance_type_and_id(void **state)
{
	struct dir *d = *state;
	struct hostid h;

	put(d, "sys_vendor", "Amazon EC2");
	put(d, "product_name", "m6i.xlarge");
	put(d, "board_asset_tag", "i-0123456789abcdef0");
	put(d, "chassis_asset_tag", "Amazon EC2");
	put(d, "bios_vendor", "Amazon EC2");
	put(d, "bios_version", "1.0");
	read_ok(d, &h);
	assert_string_equal(h.cloud, "aws");
	assert_string_equal(h.instance_type, "m6i.xlarge");
	assert_string_equal(h.instance_id, "i-0123456789abcdef0");
	assert_string_equal(h.region, ""); /* never in DMI */
	assert_int_equal(h.cloud_from, HOSTID_FROM_DMI);
	assert_int_equal(h.instance_type_from, HOSTID_FROM_DMI);
	assert_int_equal(h.cpus, 0);       /* hostid_read_size's */
	assert_int_equal(h.memory_bytes, 0);
	assert_false(h.price_known);

	/* the older, 8-digit ids; a metal instance; a type with a dash */
	put(d, "board_asset_tag", "i-0badf00d");
	put(d, "product_name", "u-6tb1.metal");
	read_ok(d, &h);
	assert_string_equal(h.instance_id, "i-0badf00d");
	assert_string_equal(h.instance_type, "u-6tb1.metal");
}

static void ec2_strings_of_the_wrong_shape_are_unknown_but_the_cloud_stays(void **state)
{
	static const char *const bad_types[] = { "M6I.XLARGE", "m6i xlarge", "-m6i", ".large", "m6i/xlarge",
						 "m6i.xlarge;rm", "" };
	static const char *const bad_ids[] = { "i-0123456789ABCDEF0", "i-0123456789abcdef", "i-0123456789abcdef00",
					       "0123456789abcdef0", "i-0123456g", "i-", "x-01234567" };
	struct dir *d = *state;
	struct hostid h;

	put(d, "sys_vendor", "Amazon EC2");
	for (size_t i = 0; i < sizeof(bad_types) / sizeof(bad_types[0]); i++) {
		put(d, "product_name", bad_types[i]);
		put(d, "board_asset_tag", bad_ids[i]);
		read_ok(d, &h);
		assert_string_equal(h.cloud, "aws");
		assert_string_equal(h.instance_type, "");
		assert_int_equal(h.instance_type_from, HOSTID_UNKNOWN);
		assert_string_equal(h.instance_id, "");
	}
	/* 64 bytes is the most an instance type may have */
	put(d, "product_name", "a123456789b123456789c123456789d123456789e123456789f123456789g123");
	read_ok(d, &h);
	assert_int_equal(strlen(h.instance_type), 64);
	put(d, "product_name", "a123456789b123456789c123456789d123456789e123456789f123456789g1234");
	read_ok(d, &h);
	assert_string_equal(h.instance_type, "");
}

static void ec2_on_xen_is_aws_without_type_or_id(void **state)
{
	struct dir *d = *state;
	struct hostid h;

	put(d, "sys_vendor", "Xen");
	put(d, "product_name", "HVM domU");
	put(d, "bios_vendor", "Xen");
	put(d, "bios_version", "4.11.amazon");
	read_ok(d, &h);
	assert_string_equal(h.cloud, "aws");
	assert_string_equal(h.instance_type, "");
	assert_string_equal(h.instance_id, "");
	/* Xen elsewhere is nobody's cloud */
	put(d, "bios_version", "4.16.1");
	read_ok(d, &h);
	assert_unknown(&h);
}

static void gcp_is_recognised_but_its_machine_type_is_unknown(void **state)
{
	struct dir *d = *state;
	struct hostid h;

	put(d, "sys_vendor", "Google");
	put(d, "product_name", "Google Compute Engine");
	put(d, "bios_vendor", "Google");
	put(d, "board_asset_tag", "i-0123456789abcdef0"); /* not an EC2 id on GCP */
	read_ok(d, &h);
	assert_string_equal(h.cloud, "gcp");
	assert_int_equal(h.cloud_from, HOSTID_FROM_DMI);
	assert_string_equal(h.instance_type, "");
	assert_string_equal(h.instance_id, "");
	/* the product name alone says it too */
	put(d, "sys_vendor", "");
	read_ok(d, &h);
	assert_string_equal(h.cloud, "gcp");
}

static void azure_is_hyper_v_with_azures_chassis_tag_only(void **state)
{
	struct dir *d = *state;
	struct hostid h;

	put(d, "sys_vendor", "Microsoft Corporation");
	put(d, "product_name", "Virtual Machine");
	put(d, "chassis_asset_tag", "7783-7084-3265-9085-8269-3286-77");
	read_ok(d, &h);
	assert_string_equal(h.cloud, "azure");
	assert_string_equal(h.instance_type, "");
	assert_string_equal(h.instance_id, "");
	/* Hyper-V on a desktop */
	put(d, "chassis_asset_tag", "None");
	read_ok(d, &h);
	assert_unknown(&h);
}

static void a_laptop_is_unknown(void **state)
{
	struct dir *d = *state;
	struct hostid h;

	put(d, "sys_vendor", "LENOVO");
	put(d, "product_name", "20XW00A3GE");
	put(d, "product_version", "ThinkPad X1 Carbon Gen 9");
	put(d, "board_asset_tag", "Not Available");
	put(d, "chassis_asset_tag", "No Asset Information");
	put(d, "bios_vendor", "LENOVO");
	put(d, "bios_version", "N32ET75W (1.51 )");
	read_ok(d, &h);
	assert_unknown(&h);
	/* nor is a QEMU guest (this VM, with DMI) */
	put(d, "sys_vendor", "QEMU");
	put(d, "product_name", "Standard PC (Q35 + ICH9, 2009)");
	read_ok(d, &h);
	assert_unknown(&h);
}

/* ---- hostile and odd files -------------------------------------------- */

static void blanks_around_a_value_are_trimmed(void **state)
{
	struct dir *d = *state;
	struct hostid h;

	put(d, "sys_vendor", "  Amazon EC2 \t\r");
	put(d, "product_name", "\tc7g.large  ");
	read_ok(d, &h);
	assert_string_equal(h.cloud, "aws");
	assert_string_equal(h.instance_type, "c7g.large");
}

static void a_value_with_a_byte_that_is_not_printable_ascii_is_unknown(void **state)
{
	static const char *const hostile[] = { "Amazon\x1b[2J EC2", "Amazon EC2\x7f", "Amazon\xc2\xa0" "EC2",
					       "Amazon EC2\xff" };
	struct dir *d = *state;
	struct hostid h;

	for (size_t i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++) {
		put(d, "sys_vendor", hostile[i]);
		put(d, "product_name", "m6i.xlarge");
		read_ok(d, &h);
		assert_unknown(&h);
	}
	/* a NUL inside: not a string */
	put_n(d, "sys_vendor", "Amazon EC2\0junk", 15);
	read_ok(d, &h);
	assert_unknown(&h);
	/* in the type: the cloud is known, the type not */
	put(d, "sys_vendor", "Amazon EC2");
	put(d, "product_name", "m6i.xlarge\n\x1b]0;owned\x07");
	read_ok(d, &h);
	assert_string_equal(h.cloud, "aws");
	assert_string_equal(h.instance_type, "");
}

static void a_file_longer_than_the_bound_is_unknown(void **state)
{
	struct dir *d = *state;
	char big[4 * READ_MAX_DMI];
	struct hostid h;

	memset(big, ' ', sizeof(big));
	memcpy(big, "Amazon EC2", 10); /* trimmed, it would be the vendor: its length alone refuses it */
	put_n(d, "sys_vendor", big, sizeof(big));
	put(d, "product_name", "m6i.xlarge");
	read_ok(d, &h);
	assert_unknown(&h);
	/* at the bound (the text and its newline), it is read */
	put_n(d, "sys_vendor", big, READ_MAX_DMI - 1);
	read_ok(d, &h);
	assert_string_equal(h.cloud, "aws");
	put_n(d, "sys_vendor", big, READ_MAX_DMI);
	read_ok(d, &h);
	assert_unknown(&h);
}

static void missing_files_and_a_missing_directory_are_unknown(void **state)
{
	struct dir *d = *state;
	char path[192];
	struct hostid h;

	read_ok(d, &h); /* an empty directory */
	assert_unknown(&h);
	put(d, "sys_vendor", "Amazon EC2"); /* the vendor alone */
	read_ok(d, &h);
	assert_string_equal(h.cloud, "aws");
	assert_string_equal(h.instance_type, "");
	assert_string_equal(h.instance_id, "");
	snprintf(path, sizeof(path), "%s/none", d->path);
	memset(&h, 0x5a, sizeof(h));
	assert_int_equal(hostid_read(path, &h), -ENOENT);
	assert_unknown(&h);
	assert_int_equal(h.cpus, 0);
	/* a file where the directory should be */
	snprintf(path, sizeof(path), "%s/sys_vendor", d->path);
	assert_int_equal(hostid_read(path, &h), -ENOTDIR);
	assert_unknown(&h);
}

static void fifos_directories_and_symlinks_are_not_read(void **state)
{
	struct dir *d = *state;
	char path[192], target[192];
	struct hostid h;

	put(d, "product_name", "m6i.xlarge");
	/* a FIFO nobody writes: opened non-blocking, refused, not waited on */
	snprintf(path, sizeof(path), "%s/sys_vendor", d->path);
	assert_int_equal(mkfifo(path, 0644), 0);
	read_ok(d, &h);
	assert_unknown(&h);
	unlink(path);
	assert_int_equal(mkdir(path, 0755), 0);
	read_ok(d, &h);
	assert_unknown(&h);
	rmdir(path);
	/* a symlink to a file that says Amazon EC2 */
	snprintf(target, sizeof(target), "%s/elsewhere", d->path);
	put(d, "elsewhere", "Amazon EC2");
	assert_int_equal(symlink(target, path), 0);
	read_ok(d, &h);
	assert_unknown(&h);
}

/* ---- shapes ----------------------------------------------------------- */

static void instance_types_and_ids_have_their_shapes(void **state)
{
	(void)state;
	assert_true(hostid_valid_instance_type("m6i.xlarge"));
	assert_true(hostid_valid_instance_type("p4d.24xlarge"));
	assert_true(hostid_valid_instance_type("n2-standard-4"));
	assert_true(hostid_valid_instance_type("t3"));
	assert_false(hostid_valid_instance_type(""));
	assert_false(hostid_valid_instance_type("Standard_D4s_v5")); /* DMI's shape; the config takes this one */
	assert_false(hostid_valid_instance_type("m6i.xlarge "));
	assert_true(hostid_valid_instance_id("i-0123456789abcdef0"));
	assert_true(hostid_valid_instance_id("i-01234567"));
	assert_false(hostid_valid_instance_id("i-012345678"));
	assert_false(hostid_valid_instance_id("i-0123456789abcdef0 "));
	assert_false(hostid_valid_instance_id(""));
}

/* ---- size --------------------------------------------------------------- */

static void memory_is_memtotal_and_cpus_are_the_online_ones(void **state)
{
	struct dir *d = *state;
	char path[192];
	struct hostid h;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	memset(&h, 0, sizeof(h));
	put(d, "meminfo", "MemTotal:       24684084 kB\nMemFree:         1000 kB");
	snprintf(path, sizeof(path), "%s/meminfo", d->path);
	hostid_read_size(path, &h);
	assert_int_equal(h.memory_bytes, 24684084ULL * 1024);
	assert_true(cpus > 0);
	assert_int_equal(h.cpus, (uint32_t)cpus);
	/* not the first line; then the real one */
	put(d, "meminfo", "Junk: 1 kB\nMemTotal: 2048 kB");
	hostid_read_size(path, &h);
	assert_int_equal(h.memory_bytes, 2048 * 1024);
	hostid_read_size(HOSTID_MEMINFO, &h);
	assert_true(h.memory_bytes > 0);
}

/* A meminfo at its bound is read; one byte longer is not (not even its first line): sysinfo's figure. */
static void a_meminfo_longer_than_its_bound_is_not_read(void **state)
{
	static char text[READ_MAX_MEMINFO];
	struct dir *d = *state;
	char path[192];
	struct hostid h;

	snprintf(path, sizeof(path), "%s/meminfo", d->path);
	memset(text, ' ', sizeof(text));
	memcpy(text, "MemTotal: 2048 kB\n", 18);
	put_n(d, "meminfo", text, READ_MAX_MEMINFO - 1); /* and its newline: READ_MAX_MEMINFO bytes */
	hostid_read_size(path, &h);
	assert_int_equal(h.memory_bytes, 2048 * 1024);
	put_n(d, "meminfo", text, READ_MAX_MEMINFO);
	hostid_read_size(path, &h);
	assert_true(h.memory_bytes > 2048 * 1024); /* this machine's memory, from sysinfo */
}

static void a_meminfo_that_makes_no_sense_falls_back_to_sysinfo(void **state)
{
	static const char *const bad[] = { "MemTotal: 12 MB", "MemTotal: kB", "MemFree: 12 kB",
					   "MemTotal: 99999999999999999999 kB", "MemTotal: 18014398509481984 kB" };
	struct dir *d = *state;
	char path[192];
	struct hostid h, real;

	memset(&real, 0, sizeof(real));
	hostid_read_size(HOSTID_MEMINFO, &real);
	snprintf(path, sizeof(path), "%s/meminfo", d->path);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		put(d, "meminfo", bad[i]);
		memset(&h, 0, sizeof(h));
		hostid_read_size(path, &h);
		/* sysinfo's total: the same memory as MemTotal, counted by the same kernel */
		assert_true(h.memory_bytes > 0);
		assert_true(h.memory_bytes / 4096 == real.memory_bytes / 4096);
	}
	memset(&h, 0, sizeof(h));
	hostid_read_size("/nonexistent/meminfo", &h);
	assert_true(h.memory_bytes > 0);
}

/* ---- the config over DMI ------------------------------------------------- */

static void the_config_overrides_dmi_and_adds_region_and_price(void **state)
{
	struct dir *d = *state;
	struct tracer_config *cfg = malloc(sizeof(*cfg));
	char err[256], price[HOSTID_PRICE_TEXT_MAX];
	struct hostid h;

	assert_non_null(cfg);
	config_defaults(cfg);
	put(d, "sys_vendor", "Amazon EC2");
	put(d, "product_name", "m6i.xlarge");
	put(d, "board_asset_tag", "i-0123456789abcdef0");
	read_ok(d, &h);
	/* the defaults: nothing changes */
	hostid_apply_config(&h, cfg);
	assert_string_equal(h.instance_type, "m6i.xlarge");
	assert_int_equal(h.instance_type_from, HOSTID_FROM_DMI);
	assert_string_equal(h.region, "");
	assert_false(h.price_known);
	hostid_price_text(&h, price);
	assert_string_equal(price, "");

	assert_int_equal(config_set(cfg, "instance_type", "m6i.2xlarge", err, sizeof(err)), 0);
	assert_int_equal(config_set(cfg, "region", "us-east-1", err, sizeof(err)), 0);
	assert_int_equal(config_set(cfg, "price_per_hour", "0.384", err, sizeof(err)), 0);
	hostid_apply_config(&h, cfg);
	assert_string_equal(h.cloud, "aws");
	assert_int_equal(h.cloud_from, HOSTID_FROM_DMI);
	assert_string_equal(h.instance_type, "m6i.2xlarge");
	assert_int_equal(h.instance_type_from, HOSTID_FROM_CONFIG);
	assert_string_equal(h.instance_id, "i-0123456789abcdef0"); /* still DMI's */
	assert_string_equal(h.region, "us-east-1");
	assert_true(h.price_known);
	assert_int_equal(h.price_micro_usd, 384000);
	hostid_price_text(&h, price);
	assert_string_equal(price, "0.384");

	/* on an unknown host, the config is all there is; a price of 0 is a price */
	put(d, "sys_vendor", "LENOVO");
	read_ok(d, &h);
	assert_int_equal(config_set(cfg, "cloud", "onprem", err, sizeof(err)), 0);
	assert_int_equal(config_set(cfg, "instance_type", "Standard_D4s_v5", err, sizeof(err)), 0);
	assert_int_equal(config_set(cfg, "price_per_hour", "0", err, sizeof(err)), 0);
	hostid_apply_config(&h, cfg);
	assert_string_equal(h.cloud, "onprem");
	assert_int_equal(h.cloud_from, HOSTID_FROM_CONFIG);
	assert_string_equal(h.instance_type, "Standard_D4s_v5");
	assert_true(h.price_known);
	hostid_price_text(&h, price);
	assert_string_equal(price, "0");
	free(cfg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(ec2_nitro_gives_the_instance_type_and_id, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(ec2_strings_of_the_wrong_shape_are_unknown_but_the_cloud_stays, dir_setup,
						dir_teardown),
		cmocka_unit_test_setup_teardown(ec2_on_xen_is_aws_without_type_or_id, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(gcp_is_recognised_but_its_machine_type_is_unknown, dir_setup,
						dir_teardown),
		cmocka_unit_test_setup_teardown(azure_is_hyper_v_with_azures_chassis_tag_only, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(a_laptop_is_unknown, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(blanks_around_a_value_are_trimmed, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(a_value_with_a_byte_that_is_not_printable_ascii_is_unknown, dir_setup,
						dir_teardown),
		cmocka_unit_test_setup_teardown(a_file_longer_than_the_bound_is_unknown, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(missing_files_and_a_missing_directory_are_unknown, dir_setup,
						dir_teardown),
		cmocka_unit_test_setup_teardown(fifos_directories_and_symlinks_are_not_read, dir_setup, dir_teardown),
		cmocka_unit_test(instance_types_and_ids_have_their_shapes),
		cmocka_unit_test_setup_teardown(memory_is_memtotal_and_cpus_are_the_online_ones, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(a_meminfo_longer_than_its_bound_is_not_read, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(a_meminfo_that_makes_no_sense_falls_back_to_sysinfo, dir_setup,
						dir_teardown),
		cmocka_unit_test_setup_teardown(the_config_overrides_dmi_and_adds_region_and_price, dir_setup,
						dir_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
