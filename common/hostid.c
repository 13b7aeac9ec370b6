/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The host's identity from DMI, its size, and the config's overrides
 * (hostid.h). Every file is read with a bound and every value is checked
 * for its shape: the firmware's strings are the hypervisor's to write.
 */
#include "hostid.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "parse.h"
#include "readfile.h"

/* The DMI strings that say which cloud a machine is, and on EC2 its type and id. */
#define AWS_VENDOR "Amazon EC2"
#define AWS_XEN_BIOS_SUFFIX ".amazon" /* bios_version of EC2's Xen instances: "4.11.amazon" */
#define GCP_VENDOR "Google"
#define GCP_PRODUCT "Google Compute Engine"
#define AZURE_VENDOR "Microsoft Corporation"
#define AZURE_CHASSIS_TAG "7783-7084-3265-9085-8269-3286-77" /* Hyper-V on Azure, not elsewhere */

/* One DMI string: "" when missing, unreadable, too long or not printable ASCII. */
struct dmi_text {
	char s[READ_MAX_DMI + 1];
};

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* The file's text, trimmed; "" unless every byte of it is printable ASCII. */
static void dmi_read(int dirfd, const char *name, struct dmi_text *t)
{
	char buf[READ_MAX_DMI + 1];
	ssize_t n = read_file_bounded(dirfd, name, O_NOFOLLOW, buf, READ_MAX_DMI, NULL);
	size_t start = 0, end;

	t->s[0] = 0;
	if (n < 0) /* missing, not a regular file (a FIFO put there does not hang us), or too long: unknown */
		return;
	end = (size_t)n;
	while (start < end && is_blank(buf[start]))
		start++;
	while (end > start && is_blank(buf[end - 1]))
		end--;
	for (size_t i = start; i < end; i++)
		if (buf[i] < 0x20 || buf[i] > 0x7e)
			return;
	memcpy(t->s, buf + start, end - start);
	t->s[end - start] = 0;
}

bool hostid_valid_instance_type(const char *s)
{
	size_t n = strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789.-");

	return n > 0 && n < HOSTID_NAME_MAX && !s[n] && s[0] != '.' && s[0] != '-';
}

bool hostid_valid_instance_id(const char *s)
{
	size_t n = strncmp(s, "i-", 2) ? 0 : strspn(s + 2, "0123456789abcdef");

	return (n == 8 || n == 17) && !s[2 + n];
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n > k && !strcmp(s + n - k, suffix);
}

/* src, cut to size - 1 bytes (the values are checked to fit before). */
static void set_text(char *dst, size_t size, const char *src)
{
	size_t n = strnlen(src, size - 1);

	memcpy(dst, src, n);
	dst[n] = 0;
}

int hostid_read(const char *dmi_dir, struct hostid *out)
{
	struct dmi_text vendor, product, board_tag, chassis_tag, bios_version;
	int dirfd;

	memset(out, 0, sizeof(*out));
	dirfd = open(dmi_dir, O_RDONLY | O_CLOEXEC | O_DIRECTORY);
	if (dirfd < 0)
		return -errno;
	dmi_read(dirfd, "sys_vendor", &vendor);
	dmi_read(dirfd, "product_name", &product);
	dmi_read(dirfd, "board_asset_tag", &board_tag);
	dmi_read(dirfd, "chassis_asset_tag", &chassis_tag);
	dmi_read(dirfd, "bios_version", &bios_version);
	close(dirfd);

	if (!strcmp(vendor.s, AWS_VENDOR)) {
		set_text(out->cloud, sizeof(out->cloud), "aws");
		if (hostid_valid_instance_type(product.s)) {
			set_text(out->instance_type, sizeof(out->instance_type), product.s);
			out->instance_type_from = HOSTID_FROM_DMI;
		}
		if (hostid_valid_instance_id(board_tag.s))
			set_text(out->instance_id, sizeof(out->instance_id), board_tag.s);
	} else if (!strcmp(vendor.s, "Xen") && ends_with(bios_version.s, AWS_XEN_BIOS_SUFFIX)) {
		set_text(out->cloud, sizeof(out->cloud), "aws"); /* DMI names neither its type nor its id */
	} else if (!strcmp(vendor.s, GCP_VENDOR) || !strcmp(product.s, GCP_PRODUCT)) {
		set_text(out->cloud, sizeof(out->cloud), "gcp"); /* the machine type is not in DMI */
	} else if (!strcmp(vendor.s, AZURE_VENDOR) && !strcmp(chassis_tag.s, AZURE_CHASSIS_TAG)) {
		set_text(out->cloud, sizeof(out->cloud), "azure"); /* nor the VM size */
	}
	if (out->cloud[0])
		out->cloud_from = HOSTID_FROM_DMI;
	return 0;
}

/* MemTotal of a meminfo text, in bytes; 0 when it has none that makes sense. */
static uint64_t meminfo_total(const char *text)
{
	static const char key[] = "MemTotal:";
	const char *p = text;
	uint64_t kib;
	size_t n;

	while (p && strncmp(p, key, sizeof(key) - 1)) {
		p = strchr(p, '\n');
		p = p ? p + 1 : NULL;
	}
	if (!p)
		return 0;
	p = text + parse_skip_blanks(text, (size_t)(p - text) + sizeof(key) - 1);
	if (parse_u64_prefix(p, &n, &kib) || strncmp(p + n, " kB", 3) || kib > UINT64_MAX / 1024)
		return 0;
	return kib * 1024;
}

void hostid_read_size(const char *meminfo_path, struct hostid *out)
{
	char buf[READ_MAX_MEMINFO + 1];
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	ssize_t n = read_file_bounded(AT_FDCWD, meminfo_path, O_NOFOLLOW, buf, READ_MAX_MEMINFO, NULL);
	struct sysinfo si;

	out->cpus = cpus > 0 && (unsigned long)cpus <= UINT32_MAX ? (uint32_t)cpus : 0;
	out->memory_bytes = n > 0 ? meminfo_total(buf) : 0;
	if (!out->memory_bytes && !sysinfo(&si) && si.mem_unit && si.totalram <= UINT64_MAX / si.mem_unit)
		out->memory_bytes = (uint64_t)si.totalram * si.mem_unit;
}

void hostid_read_name(struct hostid *out)
{
	struct utsname u;

	out->name[0] = 0;
	if (uname(&u) || !strcmp(u.nodename, "(none)"))
		return;
	for (const char *c = u.nodename; *c; c++)
		if (*c <= ' ' || *c > '~')
			return; /* a name of blanks or control bytes says nothing we could compare */
	set_text(out->name, sizeof(out->name), u.nodename);
}

void hostid_apply_config(struct hostid *h, const struct tracer_config *cfg)
{
	if (cfg->cloud[0]) {
		set_text(h->cloud, sizeof(h->cloud), cfg->cloud);
		h->cloud_from = HOSTID_FROM_CONFIG;
	}
	if (cfg->instance_type[0]) {
		set_text(h->instance_type, sizeof(h->instance_type), cfg->instance_type);
		h->instance_type_from = HOSTID_FROM_CONFIG;
	}
	if (cfg->region[0])
		set_text(h->region, sizeof(h->region), cfg->region);
	if (cfg->price_per_hour.set) {
		h->price_known = true;
		h->price_micro_usd = cfg->price_per_hour.micro_usd;
	}
}

void hostid_price_text(const struct hostid *h, char out[HOSTID_PRICE_TEXT_MAX])
{
	if (h->price_known)
		config_format_price(h->price_micro_usd, out, HOSTID_PRICE_TEXT_MAX);
	else
		out[0] = 0;
}
