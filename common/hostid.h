/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The host a run ran on, as `tracer cost` needs it to price the run
 * (docs/processor.md, "Host identity"): the cloud, the instance type and
 * id, the region, the CPUs and memory, and the price per hour the user
 * pays. Read once, at start, before the sandbox; constant afterwards.
 *
 * The firmware's DMI strings (/sys/class/dmi/id) say which cloud made the
 * machine, and on AWS's Nitro instances its type and id:
 *
 *   sys_vendor         product_name            board_asset_tag   chassis_asset_tag
 *   Amazon EC2         m6i.xlarge              i-0123456789abcdef0
 *   Google             Google Compute Engine
 *   Microsoft Corporation  Virtual Machine                       7783-7084-3265-9085-8269-3286-77
 *   Xen (AWS's older instances: bios_version "4.11.amazon")
 *
 * Nothing else is guessed: a laptop, a VM of another kind, an instance
 * whose strings do not have the expected shape are "unknown". The region
 * and the price are never in DMI: the config gives them (instance_type,
 * region, cloud, price_per_hour override what DMI says).
 *
 * The strings come from files anyone with root on the host (or a
 * hypervisor) wrote: each file is read at most READ_MAX_DMI bytes,
 * trimmed, and kept only when every byte is printable ASCII; the values
 * kept have the shape of what they claim to be, or are unknown.
 */
#ifndef TRACER_COMMON_HOSTID_H
#define TRACER_COMMON_HOSTID_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"

#define HOSTID_DMI_DIR "/sys/class/dmi/id"
#define HOSTID_MEMINFO "/proc/meminfo"
#define HOSTID_CLOUD_MAX CONFIG_CLOUD_MAX    /* "aws", "gcp", "azure", or the config's, and its NUL */
#define HOSTID_NAME_MAX CONFIG_HOST_NAME_MAX /* instance type, id, region: at most 64 bytes and the NUL */
#define HOSTID_PRICE_TEXT_MAX CONFIG_PRICE_TEXT_MAX

/* Where a value came from, for the log line and the docs. */
enum hostid_source { HOSTID_UNKNOWN = 0, HOSTID_FROM_DMI, HOSTID_FROM_CONFIG };

/* Every string is "" when unknown; every number 0 when unknown. */
struct hostid {
	char name[HOSTID_NAME_MAX];      /* uname's nodename (a SLURM job's SLURM_SUBMIT_HOST names it) */
	char cloud[HOSTID_CLOUD_MAX];
	char instance_type[HOSTID_NAME_MAX];
	char instance_id[HOSTID_NAME_MAX];
	char region[HOSTID_NAME_MAX];
	enum hostid_source cloud_from, instance_type_from;
	uint32_t cpus;              /* online CPUs */
	uint64_t memory_bytes;      /* MemTotal */
	bool price_known;
	uint64_t price_micro_usd;   /* per hour, in millionths of a US dollar */
};

/*
 * The cloud, instance type and id from the DMI files in dmi_dir
 * (HOSTID_DMI_DIR; tests give a directory of their own). *out is reset
 * first; cpus, memory and price are left 0 (hostid_read_size, below).
 * 0 when the directory could be read (whether or not a cloud was
 * recognised), -ENOENT when there is none (a container without /sys, a
 * machine without DMI), or another -errno: *out then says unknown.
 */
int hostid_read(const char *dmi_dir, struct hostid *out);

/*
 * The CPUs online (sysconf) and MemTotal from meminfo_path
 * (HOSTID_MEMINFO), else sysinfo()'s total; each 0 when unknown.
 */
void hostid_read_size(const char *meminfo_path, struct hostid *out);

/*
 * The host's name: uname()'s nodename (what gethostname() says); "" when
 * uname fails, the kernel's "(none)", or a byte is not printable ASCII.
 */
void hostid_read_name(struct hostid *out);

/* The config's keys (cloud, instance_type, region, price_per_hour) over what DMI said, where set. */
void hostid_apply_config(struct hostid *h, const struct tracer_config *cfg);

/*
 * The shapes a value must have (docs/processor.md): an instance type as
 * DMI gives it, [a-z0-9.-], 1..64 bytes, starting with a letter or a
 * digit; an EC2 instance id, "i-" and 8 or 17 lowercase hex digits.
 */
bool hostid_valid_instance_type(const char *s);
bool hostid_valid_instance_id(const char *s);

/* The price as a JSON number ("0.192", "12", "0"), NUL-terminated; "" when unknown. */
void hostid_price_text(const struct hostid *h, char out[HOSTID_PRICE_TEXT_MAX]);

#endif /* TRACER_COMMON_HOSTID_H */
