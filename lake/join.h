/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Cluster jobs joined to the run that submitted them (docs/live.md,
 * "Cluster jobs"): what decides whether an `sbatch` the lake holds
 * submitted a job it holds. Pure: the SQL that finds the candidates and
 * records the join is store.c's (join_jobs()).
 *
 * A job (a run detected by slurm) says where it came from:
 * SLURM_SUBMIT_HOST, SLURM_SUBMIT_DIR and SLURM_JOB_NAME. An sbatch is a
 * candidate when it ran in a traced run, on that host, in that directory,
 * and started no later than JOIN_SKEW_NS after the job. Of the candidates
 * the newest whose arguments name the job (join_names_job) submitted it;
 * when none names it (the name is in the script: Nextflow's `#SBATCH -J`),
 * the newest candidate did.
 */
#ifndef TRACER_LAKE_JOIN_H
#define TRACER_LAKE_JOIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * How much later than the job's start its sbatch may seem to start: the two
 * hosts' clocks (the job's node, the head's) as NTP keeps them. Small, so
 * that a later run's sbatch of a job of the same name in the same
 * directory (Snakemake numbers each run's jobs from 1) is never taken.
 */
#define JOIN_SKEW_NS 2000000000LL
#define JOIN_CANDIDATES_MAX 64 /* sbatches of one directory looked at, newest first */

/*
 * Whether two host names name one host: equal, or equal up to the first
 * dot of the longer (SLURM gives the short name, uname may give the full
 * one), ASCII case ignored. NULL or "" names no host.
 */
bool join_same_host(const char *a, const char *b);

/*
 * Whether an sbatch's argv (a JSON array of strings, as the lake stores
 * processes.argv; len bytes) names the job `name`: `-J NAME`, `-JNAME`,
 * `--job-name NAME`, `--job-name=NAME`, or an argument whose last path
 * component is NAME (the script: SLURM names a job after it by default).
 * false for text that is not such an array, or longer than the lake keeps.
 */
bool join_names_job(const char *argv_json, size_t len, const char *name);

/* One sbatch of the job's directory, as store.c read it. */
struct join_candidate {
	const char *host_name;  /* its run's host_name */
	const char *argv_json;  /* processes.argv */
	size_t argv_len;
};

/*
 * Which of n candidates (newest first) submitted the job that says it came
 * from submit_host and is named job_name (NULL: unnamed): its index, or -1.
 */
int join_pick(const struct join_candidate *c, size_t n, const char *submit_host, const char *job_name);

#endif
