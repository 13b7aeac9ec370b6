/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Context from cgroup paths: tables of path -> expected context, one group
 * per layout, so a failure names the layout and the exact path. Every field
 * of the result is compared, so a case also proves what is NOT reported.
 * The paths are the ones runtimes, kubelet, Slurm and systemd make (the same
 * on the v2 hierarchy and on the v1 memory hierarchy, which is what the
 * kernel sends); ids are random.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cgctx.h"

/* Container ids: 64 lowercase hex digits. */
#define ID_A "7e8e9689c2b665999b26bad365b3a2bcfa733879aa94b71409678d80e3e2a020"
#define ID_B "fbad40449a7a031fc6205ba2a3f199dbcc365ba1e090f1a3bbca20a691406e75"
#define ID_C "d44aca663fd0ee845aef338eea07b5d7857318de1b24d9b303a5f13371622973"
#define ID_D "3aa63104eb8ec8a644b71f1cefe13cc19a2cc1de1a8f35ab4c32278d4eb1d0ee"
#define ID_E "626f77d6d89b3470ac25140286152415159683350f3f9c7bd4dfb6f560b5053e"
#define ID_F "effa3b06bcdbdeb8b30db70dc087ac1ba10710ee9a6d4dd2ea87cd8994832b7f"
/* Pod uids: as kubelet writes them (cgroupfs) and as systemd slice names carry them. */
#define UID_1 "34736a00-75fe-4136-b624-ff2c6cea8990"
#define UID_1S "34736a00_75fe_4136_b624_ff2c6cea8990"
#define UID_2 "09e41fd3-f2b4-492a-9c79-33f7be46cdc8"
#define UID_2S "09e41fd3_f2b4_492a_9c79_33f7be46cdc8"
#define UID_3 "756d29a1-605d-42ea-8951-da52d0c7cb2e"
#define UID_3S "756d29a1_605d_42ea_8951_da52d0c7cb2e"
#define UID_STATIC "5a16940cb2a297394177cc00503e5c11" /* a static pod: hash of its manifest */

struct want {
	const char *path;
	unsigned flags;
	int rc;
	enum cgctx_runtime runtime;
	const char *id;
	unsigned containers;
	const char *monitor;
	enum cgctx_runtime monitor_runtime;
	const char *pod;
	enum cgctx_qos qos;
	const char *job, *step, *task;
	bool stepd;
	const char *unit, *slice;
};

static const char *str_or_empty(const char *s)
{
	return s ? s : "";
}

#define FIELD_STR(name, got, wanted)                                                                   \
	do {                                                                                           \
		if (strcmp((got), str_or_empty(wanted)))                                               \
			fail_msg("case %zu %s: %s is \"%s\", want \"%s\"", i, w->path, name, (got),     \
				 str_or_empty(wanted));                                                \
	} while (0)

#define FIELD_NUM(name, got, wanted)                                                                   \
	do {                                                                                           \
		if ((long long)(got) != (long long)(wanted))                                           \
			fail_msg("case %zu %s: %s is %lld, want %lld", i, w->path, name, (long long)(got), \
				 (long long)(wanted));                                                 \
	} while (0)

static void check_one(size_t i, const struct want *w, const char *path, size_t len)
{
	struct cgctx c;
	unsigned want_containers = w->containers ? w->containers : (w->id ? 1 : 0);
	int rc;

	memset(&c, 0xa5, sizeof(c)); /* every field must be written */
	rc = cgctx_parse(path, len, w->flags, &c);
	FIELD_NUM("rc", rc, w->rc);
	FIELD_NUM("runtime", c.runtime, w->runtime);
	FIELD_STR("container_id", c.container_id, w->id);
	FIELD_NUM("containers", c.containers, want_containers);
	FIELD_STR("monitor_of", c.monitor_of, w->monitor);
	FIELD_NUM("monitor_runtime", c.monitor_runtime, w->monitor_runtime);
	FIELD_STR("pod_uid", c.pod_uid, w->pod);
	FIELD_NUM("qos", c.qos, w->qos);
	FIELD_STR("slurm_job", c.slurm_job, w->job);
	FIELD_STR("slurm_step", c.slurm_step, w->step);
	FIELD_STR("slurm_task", c.slurm_task, w->task);
	FIELD_NUM("slurm_stepd", c.slurm_stepd, w->stepd);
	FIELD_STR("unit", c.unit, w->unit);
	FIELD_STR("slice", c.slice, w->slice);
	FIELD_NUM("truncated", c.truncated, w->rc == 0 && (w->flags & CGCTX_TRUNCATED));
}

static void check_cases(const struct want *cases, size_t n)
{
	for (size_t i = 0; i < n; i++)
		check_one(i, &cases[i], cases[i].path, strlen(cases[i].path));
}

#define CHECK(cases) check_cases(cases, sizeof(cases) / sizeof(cases[0]))

#define DOCKER CGCTX_RT_DOCKER
#define CONTAINERD CGCTX_RT_CONTAINERD
#define CRIO CGCTX_RT_CRIO
#define PODMAN CGCTX_RT_PODMAN
#define KUBERNETES CGCTX_RT_KUBERNETES
#define UNKNOWN CGCTX_RT_UNKNOWN
#define GUARANTEED CGCTX_QOS_GUARANTEED
#define BURSTABLE CGCTX_QOS_BURSTABLE
#define BESTEFFORT CGCTX_QOS_BESTEFFORT

/* ---- Docker ------------------------------------------------------------- */

static void docker_systemd_driver_scope_names_the_container(void **state)
{
	static const struct want cases[] = {
		{ .path = "/system.slice/docker-" ID_A ".scope", .runtime = DOCKER, .id = ID_A,
		  .unit = "docker-" ID_A ".scope", .slice = "system.slice" },
		/* a container running systemd, in its own cgroup namespace (v2) */
		{ .path = "/system.slice/docker-" ID_A ".scope/init.scope", .runtime = DOCKER, .id = ID_A,
		  .unit = "init.scope", .slice = "system.slice" },
		{ .path = "/system.slice/docker-" ID_A ".scope/system.slice/nginx.service", .runtime = DOCKER,
		  .id = ID_A, .unit = "nginx.service", .slice = "system.slice" },
		/* --cgroup-parent=docker.slice */
		{ .path = "/docker.slice/docker-" ID_B ".scope", .runtime = DOCKER, .id = ID_B,
		  .unit = "docker-" ID_B ".scope", .slice = "docker.slice" },
		/* rootless docker under the user's systemd */
		{ .path = "/user.slice/user-1000.slice/user@1000.service/user.slice/docker-" ID_C ".scope",
		  .runtime = DOCKER, .id = ID_C, .unit = "docker-" ID_C ".scope", .slice = "user.slice" },
	};

	(void)state;
	CHECK(cases);
}

static void docker_cgroupfs_driver_bare_id_under_docker(void **state)
{
	static const struct want cases[] = {
		{ .path = "/docker/" ID_A, .runtime = DOCKER, .id = ID_A },
		{ .path = "/docker/" ID_A "/sub/group", .runtime = DOCKER, .id = ID_A },
		/* docker in a custom cgroupfs root */
		{ .path = "/ci-runners/docker/" ID_B, .runtime = DOCKER, .id = ID_B },
	};

	(void)state;
	CHECK(cases);
}

static void nested_containers_give_the_innermost(void **state)
{
	static const struct want cases[] = {
		/* docker-in-docker, cgroupfs (RancherOS, dind) */
		{ .path = "/docker/" ID_A "/docker/" ID_B, .runtime = DOCKER, .id = ID_B, .containers = 2 },
		/* dind on v2: the inner dockerd's /docker/<id> below the outer scope */
		{ .path = "/system.slice/docker-" ID_A ".scope/docker/" ID_B, .runtime = DOCKER, .id = ID_B,
		  .containers = 2, .unit = "docker-" ID_A ".scope", .slice = "system.slice" },
		/* kind: a node container running kubelet with the systemd driver */
		{ .path = "/system.slice/docker-" ID_A ".scope/kubelet.slice/kubelet-kubepods.slice/"
			  "kubelet-kubepods-besteffort.slice/kubelet-kubepods-besteffort-pod" UID_1S ".slice/"
			  "cri-containerd-" ID_C ".scope",
		  .runtime = CONTAINERD, .id = ID_C, .containers = 2, .pod = UID_1, .qos = BESTEFFORT,
		  .unit = "cri-containerd-" ID_C ".scope",
		  .slice = "kubelet-kubepods-besteffort-pod" UID_1S ".slice" },
		/* k3d: k3s (cgroupfs) in a docker container */
		{ .path = "/docker/" ID_A "/kubepods/burstable/pod" UID_2 "/" ID_D, .runtime = KUBERNETES,
		  .id = ID_D, .containers = 2, .pod = UID_2, .qos = BURSTABLE },
	};

	(void)state;
	CHECK(cases);
}

/* ---- containerd, CRI-O, Kubernetes -------------------------------------- */

static void kubernetes_systemd_driver_pod_slices_give_pod_and_qos(void **state)
{
	static const struct want cases[] = {
		{ .path = "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_1S ".slice/"
			  "cri-containerd-" ID_A ".scope",
		  .runtime = CONTAINERD, .id = ID_A, .pod = UID_1, .qos = BURSTABLE,
		  .unit = "cri-containerd-" ID_A ".scope", .slice = "kubepods-burstable-pod" UID_1S ".slice" },
		{ .path = "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID_2S ".slice/"
			  "cri-containerd-" ID_B ".scope",
		  .runtime = CONTAINERD, .id = ID_B, .pod = UID_2, .qos = BESTEFFORT,
		  .unit = "cri-containerd-" ID_B ".scope", .slice = "kubepods-besteffort-pod" UID_2S ".slice" },
		/* guaranteed: no QoS level */
		{ .path = "/kubepods.slice/kubepods-pod" UID_3S ".slice/cri-containerd-" ID_C ".scope",
		  .runtime = CONTAINERD, .id = ID_C, .pod = UID_3, .qos = GUARANTEED,
		  .unit = "cri-containerd-" ID_C ".scope", .slice = "kubepods-pod" UID_3S ".slice" },
		/* dockershim: docker scopes in pod slices */
		{ .path = "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID_1S ".slice/"
			  "docker-" ID_D ".scope",
		  .runtime = DOCKER, .id = ID_D, .pod = UID_1, .qos = BESTEFFORT,
		  .unit = "docker-" ID_D ".scope", .slice = "kubepods-besteffort-pod" UID_1S ".slice" },
		/* CRI-O */
		{ .path = "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID_2S ".slice/"
			  "crio-" ID_E ".scope",
		  .runtime = CRIO, .id = ID_E, .pod = UID_2, .qos = BESTEFFORT,
		  .unit = "crio-" ID_E ".scope", .slice = "kubepods-besteffort-pod" UID_2S ".slice" },
		/* a process in the pod's own cgroup (the pod, no container) */
		{ .path = "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_1S ".slice",
		  .pod = UID_1, .qos = BURSTABLE, .slice = "kubepods-burstable-pod" UID_1S ".slice" },
		/* the QoS slice alone is not a pod */
		{ .path = "/kubepods.slice/kubepods-burstable.slice", .slice = "kubepods-burstable.slice" },
	};

	(void)state;
	CHECK(cases);
}

static void kubernetes_cgroupfs_driver_pod_dirs_give_pod_qos_and_container(void **state)
{
	static const struct want cases[] = {
		/* the engine is not in the path: containerd (k3s), dockershim and others look alike */
		{ .path = "/kubepods/besteffort/pod" UID_1 "/" ID_A, .runtime = KUBERNETES, .id = ID_A,
		  .pod = UID_1, .qos = BESTEFFORT },
		{ .path = "/kubepods/burstable/pod" UID_2 "/" ID_B, .runtime = KUBERNETES, .id = ID_B,
		  .pod = UID_2, .qos = BURSTABLE },
		{ .path = "/kubepods/pod" UID_3 "/" ID_C, .runtime = KUBERNETES, .id = ID_C, .pod = UID_3,
		  .qos = GUARANTEED },
		/* a sub-cgroup made inside the container */
		{ .path = "/kubepods/besteffort/pod" UID_1 "/" ID_A "/kube-proxy", .runtime = KUBERNETES,
		  .id = ID_A, .pod = UID_1, .qos = BESTEFFORT },
		/* CRI-O with cgroup_manager = "cgroupfs" names its containers */
		{ .path = "/kubepods/burstable/pod" UID_2 "/crio-" ID_D, .runtime = CRIO, .id = ID_D,
		  .pod = UID_2, .qos = BURSTABLE },
		/* kubelet --cgroup-root=/kubelet */
		{ .path = "/kubelet/kubepods/besteffort/pod" UID_3 "/" ID_E, .runtime = KUBERNETES, .id = ID_E,
		  .pod = UID_3, .qos = BESTEFFORT },
		/* the pod's own cgroup */
		{ .path = "/kubepods/burstable/pod" UID_1, .pod = UID_1, .qos = BURSTABLE },
	};

	(void)state;
	CHECK(cases);
}

static void static_pod_uid_is_kept_as_32_hex(void **state)
{
	static const struct want cases[] = {
		{ .path = "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_STATIC ".slice/"
			  "crio-" ID_A ".scope",
		  .runtime = CRIO, .id = ID_A, .pod = UID_STATIC, .qos = BURSTABLE, .unit = "crio-" ID_A ".scope",
		  .slice = "kubepods-burstable-pod" UID_STATIC ".slice" },
		{ .path = "/kubepods/burstable/pod" UID_STATIC "/" ID_B, .runtime = KUBERNETES, .id = ID_B,
		  .pod = UID_STATIC, .qos = BURSTABLE },
	};

	(void)state;
	CHECK(cases);
}

static void containerd_systemd_path_taken_literally_by_cgroupfs_runc(void **state)
{
	static const struct want cases[] = {
		{ .path = "/system.slice/containerd.service/kubepods-besteffort-pod" UID_1S
			  ".slice:cri-containerd:" ID_A,
		  .runtime = CONTAINERD, .id = ID_A, .pod = UID_1, .qos = BESTEFFORT, .unit = "containerd.service",
		  .slice = "system.slice" },
		/* the same on a v1 hierarchy systemd does not manage */
		{ .path = "/kubepods-burstable-pod" UID_2S ".slice:cri-containerd:" ID_B, .runtime = CONTAINERD,
		  .id = ID_B, .pod = UID_2, .qos = BURSTABLE },
		{ .path = "/kubepods-pod" UID_3S ".slice:crio:" ID_C, .runtime = CRIO, .id = ID_C, .pod = UID_3,
		  .qos = GUARANTEED },
		{ .path = "/system.slice:docker:" ID_D, .runtime = DOCKER, .id = ID_D },
	};

	(void)state;
	CHECK(cases);
}

static void nerdctl_scope_is_containerd(void **state)
{
	static const struct want cases[] = {
		{ .path = "/system.slice/nerdctl-" ID_A ".scope", .runtime = CONTAINERD, .id = ID_A,
		  .unit = "nerdctl-" ID_A ".scope", .slice = "system.slice" },
		/* nerdctl with the cgroupfs manager: /<namespace>/<id>, no runtime in the path */
		{ .path = "/default/" ID_B, .runtime = UNKNOWN, .id = ID_B },
	};

	(void)state;
	CHECK(cases);
}

/* ---- Podman --------------------------------------------------------------- */

static void podman_scopes_rootful_rootless_and_cgroupfs(void **state)
{
	static const struct want cases[] = {
		{ .path = "/machine.slice/libpod-" ID_A ".scope", .runtime = PODMAN, .id = ID_A,
		  .unit = "libpod-" ID_A ".scope", .slice = "machine.slice" },
		/* podman >= 4 with a cgroup namespace: the payload in a "container" sub-cgroup */
		{ .path = "/machine.slice/libpod-" ID_A ".scope/container", .runtime = PODMAN, .id = ID_A,
		  .unit = "libpod-" ID_A ".scope", .slice = "machine.slice" },
		/* rootless */
		{ .path = "/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" ID_B ".scope",
		  .runtime = PODMAN, .id = ID_B, .unit = "libpod-" ID_B ".scope", .slice = "user.slice" },
		/* in a pod (the pod id is podman's own, not a Kubernetes uid) */
		{ .path = "/machine.slice/machine-libpod_pod_" ID_C ".slice/libpod-" ID_D ".scope", .runtime = PODMAN,
		  .id = ID_D, .unit = "libpod-" ID_D ".scope", .slice = "machine-libpod_pod_" ID_C ".slice" },
		/* cgroupfs manager */
		{ .path = "/libpod_parent/libpod-" ID_E, .runtime = PODMAN, .id = ID_E },
		/* cgroupfs conmon: one cgroup for every container, naming none */
		{ .path = "/libpod_parent/conmon" },
	};

	(void)state;
	CHECK(cases);
}

static void conmon_is_a_monitor_not_the_container(void **state)
{
	static const struct want cases[] = {
		{ .path = "/machine.slice/libpod-conmon-" ID_A ".scope", .runtime = PODMAN, .monitor = ID_A,
		  .monitor_runtime = PODMAN, .unit = "libpod-conmon-" ID_A ".scope", .slice = "machine.slice" },
		{ .path = "/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-conmon-" ID_B ".scope",
		  .runtime = PODMAN, .monitor = ID_B, .monitor_runtime = PODMAN,
		  .unit = "libpod-conmon-" ID_B ".scope", .slice = "user.slice" },
		{ .path = "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID_1S ".slice/"
			  "crio-conmon-" ID_C ".scope",
		  .runtime = CRIO, .monitor = ID_C, .monitor_runtime = CRIO, .pod = UID_1, .qos = BESTEFFORT,
		  .unit = "crio-conmon-" ID_C ".scope", .slice = "kubepods-besteffort-pod" UID_1S ".slice" },
		{ .path = "/kubepods/besteffort/pod" UID_2 "/crio-conmon-" ID_D, .runtime = CRIO, .monitor = ID_D,
		  .monitor_runtime = CRIO, .pod = UID_2, .qos = BESTEFFORT },
		/* a monitor inside another container: the process is in the outer one */
		{ .path = "/docker/" ID_A "/machine.slice/libpod-conmon-" ID_B ".scope", .runtime = DOCKER,
		  .id = ID_A, .monitor = ID_B, .monitor_runtime = PODMAN, .unit = "libpod-conmon-" ID_B ".scope",
		  .slice = "machine.slice" },
	};

	(void)state;
	CHECK(cases);
}

/* ---- SLURM ------------------------------------------------------------------ */

static void slurm_v1_uid_job_step_task(void **state)
{
	static const struct want cases[] = {
		{ .path = "/slurm/uid_1000/job_4242/step_0/task_0", .job = "4242", .step = "0", .task = "0" },
		{ .path = "/slurm/uid_1000/job_4242/step_12/task_7", .job = "4242", .step = "12", .task = "7" },
		{ .path = "/slurm/uid_1000/job_4242/step_batch/task_0", .job = "4242", .step = "batch", .task = "0" },
		{ .path = "/slurm/uid_1000/job_4242/step_extern/task_0", .job = "4242", .step = "extern",
		  .task = "0" },
		{ .path = "/slurm/uid_1000/job_4242/step_interactive", .job = "4242", .step = "interactive" },
		{ .path = "/slurm/uid_0/job_1/step_batch", .job = "1", .step = "batch" },
		/* the job's own cgroup */
		{ .path = "/slurm/uid_1000/job_4294967294", .job = "4294967294" },
		/* multiple-slurmd: the root is named after the node */
		{ .path = "/slurm_node07/uid_1000/job_77/step_3/task_1", .job = "77", .step = "3", .task = "1" },
		/* a heterogeneous job's component */
		{ .path = "/slurm/uid_1000/job_80/step_0+1/task_0", .job = "80", .step = "0+1", .task = "0" },
	};

	(void)state;
	CHECK(cases);
}

static void slurm_v2_stepd_scope_job_step_user_task(void **state)
{
	static const struct want cases[] = {
		{ .path = "/system.slice/slurmstepd.scope/job_981/step_batch/user/task_0", .job = "981",
		  .step = "batch", .task = "0", .unit = "slurmstepd.scope", .slice = "system.slice" },
		{ .path = "/system.slice/slurmstepd.scope/job_981/step_3/user/task_15", .job = "981", .step = "3",
		  .task = "15", .unit = "slurmstepd.scope", .slice = "system.slice" },
		{ .path = "/system.slice/slurmstepd.scope/job_981/step_extern/user/task_special", .job = "981",
		  .step = "extern", .task = "special", .unit = "slurmstepd.scope", .slice = "system.slice" },
		/* the step's slurmstepd, beside the user's processes */
		{ .path = "/system.slice/slurmstepd.scope/job_981/step_0/slurm", .job = "981", .step = "0",
		  .stepd = true, .unit = "slurmstepd.scope", .slice = "system.slice" },
		/* the user cgroup itself, no task */
		{ .path = "/system.slice/slurmstepd.scope/job_981/step_0/user", .job = "981", .step = "0",
		  .unit = "slurmstepd.scope", .slice = "system.slice" },
		/* multiple-slurmd: <node>_slurmstepd.scope */
		{ .path = "/system.slice/node07_slurmstepd.scope/job_21868/step_1/user/task_0", .job = "21868",
		  .step = "1", .task = "0", .unit = "node07_slurmstepd.scope", .slice = "system.slice" },
		/* the waiting area for new stepds: no job */
		{ .path = "/system.slice/slurmstepd.scope/system", .unit = "slurmstepd.scope",
		  .slice = "system.slice" },
		/* a test cluster in a container */
		{ .path = "/system.slice/docker-" ID_A ".scope/system.slice/slurmstepd.scope/job_5/step_0/user/task_2",
		  .runtime = DOCKER, .id = ID_A, .job = "5", .step = "0", .task = "2", .unit = "slurmstepd.scope",
		  .slice = "system.slice" },
		/* a /slurm root on v2 (no systemd) */
		{ .path = "/slurm/job_12/step_0/user/task_0", .job = "12", .step = "0", .task = "0" },
	};

	(void)state;
	CHECK(cases);
}

/* ---- systemd -------------------------------------------------------------------- */

static void systemd_units_and_slices_are_the_innermost(void **state)
{
	static const struct want cases[] = {
		{ .path = "/system.slice/sshd.service", .unit = "sshd.service", .slice = "system.slice" },
		{ .path = "/system.slice/system-getty.slice/getty@tty1.service", .unit = "getty@tty1.service",
		  .slice = "system-getty.slice" },
		{ .path = "/user.slice/user-1000.slice/session-3.scope", .unit = "session-3.scope",
		  .slice = "user-1000.slice" },
		{ .path = "/user.slice/user-1000.slice/user@1000.service/app.slice/"
			  "app-org.gnome.Terminal.slice/vte-spawn-fbd45fd9-2c1f-4dce-b177-da71ad46be3b.scope",
		  .unit = "vte-spawn-fbd45fd9-2c1f-4dce-b177-da71ad46be3b.scope",
		  .slice = "app-org.gnome.Terminal.slice" },
		{ .path = "/user.slice/user-1000.slice/user@1000.service/init.scope", .unit = "init.scope",
		  .slice = "user-1000.slice" },
		{ .path = "/init.scope", .unit = "init.scope" },
		{ .path = "/system.slice/system-systemd\\x2dfsck.slice/systemd-fsck@dev-sda1.service",
		  .unit = "systemd-fsck@dev-sda1.service", .slice = "system-systemd\\x2dfsck.slice" },
		{ .path = "/system.slice/var-lib-docker-overlay2-" ID_A "-merged.mount",
		  .unit = "var-lib-docker-overlay2-" ID_A "-merged.mount", .slice = "system.slice" },
		/* a service's own sub-cgroups keep the service */
		{ .path = "/system.slice/containerd.service/custom/group", .unit = "containerd.service",
		  .slice = "system.slice" },
		{ .path = "/user.slice", .slice = "user.slice" },
		{ .path = "/" },
	};

	(void)state;
	CHECK(cases);
}

/* ---- What is not recognised --------------------------------------------------- */

static void ids_of_wrong_length_case_or_digits_are_not_reported(void **state)
{
	static const struct want cases[] = {
		/* 63 and 65 digits */
		{ .path = "/system.slice/docker-" "7e8e9689c2b665999b26bad365b3a2bcfa733879aa94b71409678d80e3e2a02"
			  ".scope",
		  .unit = "docker-7e8e9689c2b665999b26bad365b3a2bcfa733879aa94b71409678d80e3e2a02.scope",
		  .slice = "system.slice" },
		{ .path = "/docker/" ID_A "0" },
		{ .path = "/docker/" "7e8e9689c2b665999b26bad365b3a2bcfa733879aa94b71409678d80e3e2a02" },
		/* uppercase: no runtime writes it */
		{ .path = "/docker/7E8E9689C2B665999B26BAD365B3A2BCFA733879AA94B71409678D80E3E2A020" },
		{ .path = "/system.slice/docker-7e8e9689c2b665999b26bad365b3a2bcfa733879aa94b71409678d80e3e2a02A.scope",
		  .unit = "docker-7e8e9689c2b665999b26bad365b3a2bcfa733879aa94b71409678d80e3e2a02A.scope",
		  .slice = "system.slice" },
		/* not hex */
		{ .path = "/docker/7e8e9689c2b665999b26bad365b3a2bcfa733879aa94b71409678d80e3e2a02g" },
		/* short ids are not container ids */
		{ .path = "/docker/7e8e9689c2b6" },
		{ .path = "/system.slice/docker-7e8e9689c2b6.scope", .unit = "docker-7e8e9689c2b6.scope",
		  .slice = "system.slice" },
	};

	(void)state;
	CHECK(cases);
}

static void names_that_only_look_like_containers_are_not_reported(void **state)
{
	static const struct want cases[] = {
		/* the daemons themselves */
		{ .path = "/system.slice/docker.service", .unit = "docker.service", .slice = "system.slice" },
		{ .path = "/system.slice/containerd.service", .unit = "containerd.service", .slice = "system.slice" },
		{ .path = "/system.slice/crio.service", .unit = "crio.service", .slice = "system.slice" },
		/* wrong suffix or prefix */
		{ .path = "/system.slice/docker-" ID_A ".service", .unit = "docker-" ID_A ".service",
		  .slice = "system.slice" },
		/* docker's and containerd's systemd drivers make only scopes */
		{ .path = "/system.slice/docker-" ID_A, .slice = "system.slice" },
		{ .path = "/system.slice/cri-containerd-" ID_A, .slice = "system.slice" },
		{ .path = "/docker-" ID_A ".scope.bak" },
		{ .path = "/mydocker-" ID_A ".scope", .unit = "mydocker-" ID_A ".scope" },
		{ .path = "/system.slice/containerd.service/x:cri-containerd:" ID_A "0", .unit = "containerd.service",
		  .slice = "system.slice" },
		{ .path = "/system.slice/containerd.service/x:runc:" ID_A, .unit = "containerd.service",
		  .slice = "system.slice" },
		/* a bare id under a parent no runtime uses: the id, runtime unknown */
		{ .path = "/ecs/5a16940cb2a297394177cc00503e5c11/" ID_B, .runtime = UNKNOWN, .id = ID_B },
		{ .path = "/dockerx/" ID_B, .runtime = UNKNOWN, .id = ID_B },
	};

	(void)state;
	CHECK(cases);
}

static void pods_outside_kubepods_or_with_bad_uids_are_not_reported(void **state)
{
	static const struct want cases[] = {
		/* pod<uid> not under kubepods */
		{ .path = "/burstable/pod" UID_1 "/" ID_A, .runtime = UNKNOWN, .id = ID_A },
		{ .path = "/mypods/pod" UID_1 },
		/* systemd separators in a cgroupfs name and the reverse */
		{ .path = "/kubepods/burstable/pod" UID_1S },
		{ .path = "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_1 ".slice",
		  .slice = "kubepods-burstable-pod" UID_1 ".slice" },
		/* uppercase, short, misplaced separators */
		{ .path = "/kubepods/burstable/pod34736A00-75FE-4136-B624-FF2C6CEA8990" },
		{ .path = "/kubepods/burstable/pod34736a00-75fe-4136-b624-ff2c6cea899" },
		{ .path = "/kubepods/burstable/pod34736a0-075fe-4136-b624-ff2c6cea8990" },
		/* an unknown QoS level */
		{ .path = "/kubepods/gold/pod" UID_1 },
		{ .path = "/kubepods.slice/kubepods-gold.slice/kubepods-gold-pod" UID_1S ".slice",
		  .slice = "kubepods-gold-pod" UID_1S ".slice" },
		{ .path = "/xkubepods-pod" UID_1S ".slice", .slice = "xkubepods-pod" UID_1S ".slice" },
		{ .path = "/kubepods-pod.slice", .slice = "kubepods-pod.slice" },
	};

	(void)state;
	CHECK(cases);
}

static void slurm_names_outside_a_slurm_root_or_malformed_are_not_reported(void **state)
{
	static const struct want cases[] = {
		{ .path = "/job_42/step_0/task_0" },
		{ .path = "/user.slice/job_42/step_0", .slice = "user.slice" },
		{ .path = "/slurm/uid_1000/step_0/task_0" },
		/* numbers Slurm would not print */
		{ .path = "/slurm/uid_1000/job_042/step_0" },
		{ .path = "/slurm/uid_1000/job_0/step_0" },
		{ .path = "/slurm/uid_1000/job_4294967296/step_0" },
		{ .path = "/slurm/uid_1000/job_-1" },
		{ .path = "/slurm/uid_1000/job_42x" },
		{ .path = "/slurm/uid_1000/job_" },
		/* bad steps keep the job only */
		{ .path = "/slurm/uid_1000/job_42/step_foo/task_0", .job = "42" },
		{ .path = "/slurm/uid_1000/job_42/step_01", .job = "42" },
		{ .path = "/slurm/uid_1000/job_42/step_0+", .job = "42" },
		{ .path = "/slurm/uid_1000/job_42/step_+1", .job = "42" },
		{ .path = "/slurm/uid_1000/job_42/step_BATCH", .job = "42" },
		/* bad tasks keep the step */
		{ .path = "/slurm/uid_1000/job_42/step_0/task_x", .job = "42", .step = "0" },
		{ .path = "/slurm/uid_1000/job_42/step_0/task_01", .job = "42", .step = "0" },
		/* a task must be right under the step (v1) or its user cgroup (v2) */
		{ .path = "/slurm/uid_1000/job_42/step_0/other/task_0", .job = "42", .step = "0" },
		{ .path = "/slurm/uid_1000/job_42/task_0", .job = "42" },
		/* "slurm" under a job is not the stepd cgroup */
		{ .path = "/slurm/uid_1000/job_42/slurm", .job = "42" },
		{ .path = "/slurmx/job_42" },
		{ .path = "/slurm_/job_42" },
		{ .path = "/_slurmstepd.scope/job_42", .unit = "_slurmstepd.scope" },
	};

	(void)state;
	CHECK(cases);
}

static void unit_names_with_foreign_bytes_are_not_units(void **state)
{
	static const struct want cases[] = {
		{ .path = "/system.slice/my service.service", .slice = "system.slice" },
		{ .path = "/system.slice/\xc3\xa9t\xc3\xa9.service", .slice = "system.slice" },
		{ .path = "/system.slice/.service", .slice = "system.slice" },
		{ .path = "/system.slice/a\nb.scope", .slice = "system.slice" },
		{ .path = "/.slice" },
	};

	(void)state;
	CHECK(cases);
}

/* ---- Malformed and truncated ------------------------------------------------ */

static void paths_the_kernel_cannot_write_are_refused_whole(void **state)
{
	static const struct want cases[] = {
		{ .path = "", .rc = -EINVAL },
		{ .path = "system.slice/docker-" ID_A ".scope", .rc = -EINVAL },
		{ .path = "//", .rc = -EINVAL },
		{ .path = "/docker//" ID_A, .rc = -EINVAL },
		{ .path = "/docker/" ID_A "/", .rc = -EINVAL },
		{ .path = "/docker/../docker/" ID_A, .rc = -EINVAL },
		{ .path = "/docker/" ID_A "/..", .rc = -EINVAL },
		{ .path = "/./docker/" ID_A, .rc = -EINVAL },
		{ .path = "/system.slice/docker-" ID_A ".scope/.", .rc = -EINVAL },
	};
	static const char with_nul[] = "/docker/" ID_A "\0/docker/" ID_B;
	const struct want nul = { .path = "(embedded NUL)", .rc = -EINVAL };
	struct cgctx c;

	(void)state;
	CHECK(cases);
	check_one(0, &nul, with_nul, sizeof(with_nul) - 1);
	memset(&c, 0xa5, sizeof(c));
	assert_int_equal(cgctx_parse(NULL, 5, 0, &c), -EINVAL);
	assert_int_equal(c.container_id[0], '\0');
	assert_int_equal(c.runtime, CGCTX_RT_NONE);
	assert_int_equal(cgctx_parse(NULL, 0, CGCTX_TRUNCATED, &c), -EINVAL);
}

static void truncated_paths_drop_their_cut_first_component(void **state)
{
	static const struct want cases[] = {
		{ .path = "ce/docker-" ID_A ".scope", .flags = CGCTX_TRUNCATED, .runtime = DOCKER, .id = ID_A,
		  .unit = "docker-" ID_A ".scope" },
		{ .path = "/docker-" ID_A ".scope", .flags = CGCTX_TRUNCATED, .runtime = DOCKER, .id = ID_A,
		  .unit = "docker-" ID_A ".scope" },
		/* the cut may leave 64 hex digits of a longer name: never taken as an id */
		{ .path = ID_A "/sub", .flags = CGCTX_TRUNCATED },
		{ .path = "ker-" ID_A ".scope", .flags = CGCTX_TRUNCATED },
		/* the parent that gave a bare id its meaning is gone */
		{ .path = "/" ID_A, .flags = CGCTX_TRUNCATED, .runtime = UNKNOWN, .id = ID_A },
		{ .path = "ods-burstable-pod" UID_1S ".slice/cri-containerd-" ID_B ".scope", .flags = CGCTX_TRUNCATED,
		  .runtime = CONTAINERD, .id = ID_B, .unit = "cri-containerd-" ID_B ".scope" },
		{ .path = "pestepd.scope/job_5/step_0/user/task_1", .flags = CGCTX_TRUNCATED },
		{ .path = "", .flags = CGCTX_TRUNCATED },
		{ .path = "/", .flags = CGCTX_TRUNCATED },
		{ .path = "abc/", .flags = CGCTX_TRUNCATED, .rc = -EINVAL },
		{ .path = "abc//def", .flags = CGCTX_TRUNCATED, .rc = -EINVAL },
		{ .path = "a/../docker/" ID_A, .flags = CGCTX_TRUNCATED, .rc = -EINVAL },
	};

	(void)state;
	CHECK(cases);
}

/* ---- Long paths --------------------------------------------------------------- */

static void long_paths_are_read_to_the_end(void **state)
{
	const size_t depth = 20000;
	const char *tail = "/docker/" ID_A;
	size_t len = depth * 2 + strlen(tail);
	char *path = malloc(len + 1);
	const struct want deep = { .path = "(20000 levels, then /docker/<id>)", .runtime = DOCKER, .id = ID_A };

	(void)state;
	assert_non_null(path);
	for (size_t i = 0; i < depth; i++)
		memcpy(path + 2 * i, "/a", 2);
	memcpy(path + 2 * depth, tail, strlen(tail) + 1);
	check_one(0, &deep, path, len);
	free(path);
}

static void deep_nesting_counts_every_container(void **state)
{
	const size_t levels = 3000;
	const char *level = "/docker/" ID_A;
	size_t step = strlen(level), len = levels * step;
	char *path = malloc(len + 1);
	const struct want nested = { .path = "(3000 nested docker containers)", .runtime = DOCKER, .id = ID_A,
				     .containers = 3000 };

	(void)state;
	assert_non_null(path);
	for (size_t i = 0; i < levels; i++)
		memcpy(path + i * step, level, step);
	path[len] = '\0';
	check_one(0, &nested, path, len);
	free(path);
}

static void over_long_names_fit_no_field(void **state)
{
	char unit[400], path[1200];
	struct want w = { 0 };

	(void)state;
	/* 255 bytes: a unit; 256: not (systemd's limit) */
	memset(unit, 'u', sizeof(unit));
	memcpy(unit + 255 - strlen(".service"), ".service", strlen(".service") + 1);
	snprintf(path, sizeof(path), "/system.slice/%s", unit);
	w.path = path;
	w.unit = unit;
	w.slice = "system.slice";
	check_one(0, &w, path, strlen(path));

	memset(unit, 'u', sizeof(unit));
	memcpy(unit + 256 - strlen(".service"), ".service", strlen(".service") + 1);
	snprintf(path, sizeof(path), "/system.slice/%s", unit);
	w.unit = NULL;
	check_one(1, &w, path, strlen(path));

	/* a 1000-byte component ending like a container scope */
	memset(path, 'x', sizeof(path));
	path[0] = '/';
	memcpy(path + 1000 - strlen("docker-" ID_A ".scope"), "docker-" ID_A ".scope", strlen("docker-" ID_A ".scope") + 1);
	w = (struct want){ .path = "(1000-byte component)" };
	check_one(2, &w, path, strlen(path));
}

/* ---- Helpers ------------------------------------------------------------------- */

static void short_id_is_the_first_twelve_digits_of_a_valid_id(void **state)
{
	char out[CGCTX_SHORT_ID_LEN + 1];

	(void)state;
	assert_int_equal(cgctx_short_id(ID_A, out, sizeof(out)), 12);
	assert_string_equal(out, "7e8e9689c2b6");
	assert_int_equal(cgctx_short_id("7e8e9689c2b6", out, sizeof(out)), 0);
	assert_string_equal(out, "");
	assert_int_equal(cgctx_short_id(ID_A "0", out, sizeof(out)), 0);
	assert_string_equal(out, "");
	assert_int_equal(cgctx_short_id("7E8E9689C2B665999B26BAD365B3A2BCFA733879AA94B71409678D80E3E2A020", out,
					sizeof(out)),
			 0);
	assert_int_equal(cgctx_short_id(NULL, out, sizeof(out)), 0);
	assert_string_equal(out, "");
	assert_int_equal(cgctx_short_id(ID_A, out, 12), 0); /* no room for the NUL */
	assert_string_equal(out, "");
	assert_int_equal(cgctx_short_id(ID_A, NULL, 13), 0);
	assert_int_equal(cgctx_short_id(ID_A, out, 0), 0);
}

static void container_id_check_wants_exactly_64_lowercase_hex(void **state)
{
	(void)state;
	assert_true(cgctx_is_container_id(ID_A, 64));
	assert_false(cgctx_is_container_id(ID_A, 63));
	assert_false(cgctx_is_container_id(ID_A "0", 65));
	assert_false(cgctx_is_container_id(NULL, 64));
	assert_false(cgctx_is_container_id("7E8E9689C2B665999B26BAD365B3A2BCFA733879AA94B71409678D80E3E2A020", 64));
}

static void runtime_and_qos_names_are_stable(void **state)
{
	(void)state;
	assert_string_equal(cgctx_runtime_name(CGCTX_RT_NONE), "");
	assert_string_equal(cgctx_runtime_name(CGCTX_RT_DOCKER), "docker");
	assert_string_equal(cgctx_runtime_name(CGCTX_RT_CONTAINERD), "containerd");
	assert_string_equal(cgctx_runtime_name(CGCTX_RT_CRIO), "cri-o");
	assert_string_equal(cgctx_runtime_name(CGCTX_RT_PODMAN), "podman");
	assert_string_equal(cgctx_runtime_name(CGCTX_RT_KUBERNETES), "kubernetes");
	assert_string_equal(cgctx_runtime_name(CGCTX_RT_UNKNOWN), "unknown");
	assert_string_equal(cgctx_runtime_name((enum cgctx_runtime)99), "");
	assert_string_equal(cgctx_qos_name(CGCTX_QOS_NONE), "");
	assert_string_equal(cgctx_qos_name(CGCTX_QOS_GUARANTEED), "guaranteed");
	assert_string_equal(cgctx_qos_name(CGCTX_QOS_BURSTABLE), "burstable");
	assert_string_equal(cgctx_qos_name(CGCTX_QOS_BESTEFFORT), "besteffort");
	assert_string_equal(cgctx_qos_name((enum cgctx_qos)99), "");
}

static void a_second_parse_leaves_nothing_of_the_first(void **state)
{
	static const char first[] = "/kubepods/burstable/pod" UID_1 "/" ID_A;
	static const char second[] = "/slurm/uid_1/job_2/step_3/task_4";
	struct cgctx c;

	(void)state;
	assert_int_equal(cgctx_parse(first, strlen(first), 0, &c), 0);
	assert_string_equal(c.container_id, ID_A);
	assert_int_equal(cgctx_parse(second, strlen(second), 0, &c), 0);
	assert_string_equal(c.container_id, "");
	assert_string_equal(c.pod_uid, "");
	assert_int_equal(c.qos, CGCTX_QOS_NONE);
	assert_int_equal(c.runtime, CGCTX_RT_NONE);
	assert_int_equal(c.containers, 0);
	assert_string_equal(c.slurm_task, "4");
	assert_int_equal(cgctx_parse(first, strlen(first), 0, &c), 0);
	assert_string_equal(c.slurm_job, "");
}

/* Leave a pattern on the stack below us, where the parser's locals will live. */
static __attribute__((noinline)) void scribble_stack(unsigned char pattern)
{
	volatile unsigned char junk[8192];

	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = pattern;
}

static bool zero_after_nul(const char *field, size_t size)
{
	const char *nul = memchr(field, '\0', size);

	if (!nul)
		return false;
	for (const char *p = nul; p < field + size; p++)
		if (*p)
			return false;
	return true;
}

#define ZERO_AFTER_NUL(c, f)                                                                            \
	do {                                                                                            \
		if (!zero_after_nul((c).f, sizeof((c).f)))                                              \
			fail_msg("case %zu %s: %s holds bytes after its NUL", i, paths[i], #f);         \
	} while (0)

/* Found by fuzz_cgctx: bytes after a field's NUL came from the stack or an earlier value. */
static void equal_contexts_are_equal_bytes(void **state)
{
	static const char *const paths[] = {
		"/slurm/uid_1000/job_4242/step_batch/task_0",
		"/slurm/uid_1000/job_4294967294/step_interactive/task_12/x/slurm/uid_1/job_5/step_0",
		"/kubepods/burstable/pod" UID_STATIC "/" ID_A,
		"/kubepods/burstable/pod" UID_1 "/kubepods/pod" UID_STATIC,
		"/machine.slice/libpod-conmon-" ID_A ".scope",
		"/docker/" ID_A "/machine.slice/libpod-conmon-" ID_B ".scope/docker/" ID_C,
		"/system.slice/a-much-longer-name.service/system.slice/b.scope/x-much-longer.slice/y.slice",
	};
	struct cgctx a, b;

	(void)state;
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		memset(&a, 0xa5, sizeof(a));
		memset(&b, 0x5a, sizeof(b));
		scribble_stack(0xa5);
		assert_int_equal(cgctx_parse(paths[i], strlen(paths[i]), 0, &a), 0);
		scribble_stack(0x5a);
		assert_int_equal(cgctx_parse(paths[i], strlen(paths[i]), 0, &b), 0);
		if (memcmp(&a, &b, sizeof(a)))
			fail_msg("case %zu %s: two parses differ in their bytes", i, paths[i]);
		ZERO_AFTER_NUL(a, container_id);
		ZERO_AFTER_NUL(a, monitor_of);
		ZERO_AFTER_NUL(a, pod_uid);
		ZERO_AFTER_NUL(a, slurm_job);
		ZERO_AFTER_NUL(a, slurm_step);
		ZERO_AFTER_NUL(a, slurm_task);
		ZERO_AFTER_NUL(a, unit);
		ZERO_AFTER_NUL(a, slice);
	}
	assert_string_equal(a.unit, "b.scope");
	assert_string_equal(a.slice, "y.slice");
}

static void only_len_bytes_are_read(void **state)
{
	/* the id continues past len: "/docker/<id>" cut one digit short is no container */
	static const char path[] = "/docker/" ID_A;
	struct cgctx c;

	(void)state;
	assert_int_equal(cgctx_parse(path, strlen(path) - 1, 0, &c), 0);
	assert_string_equal(c.container_id, "");
	assert_int_equal(cgctx_parse(path, strlen(path), 0, &c), 0);
	assert_string_equal(c.container_id, ID_A);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(docker_systemd_driver_scope_names_the_container),
		cmocka_unit_test(docker_cgroupfs_driver_bare_id_under_docker),
		cmocka_unit_test(nested_containers_give_the_innermost),
		cmocka_unit_test(kubernetes_systemd_driver_pod_slices_give_pod_and_qos),
		cmocka_unit_test(kubernetes_cgroupfs_driver_pod_dirs_give_pod_qos_and_container),
		cmocka_unit_test(static_pod_uid_is_kept_as_32_hex),
		cmocka_unit_test(containerd_systemd_path_taken_literally_by_cgroupfs_runc),
		cmocka_unit_test(nerdctl_scope_is_containerd),
		cmocka_unit_test(podman_scopes_rootful_rootless_and_cgroupfs),
		cmocka_unit_test(conmon_is_a_monitor_not_the_container),
		cmocka_unit_test(slurm_v1_uid_job_step_task),
		cmocka_unit_test(slurm_v2_stepd_scope_job_step_user_task),
		cmocka_unit_test(systemd_units_and_slices_are_the_innermost),
		cmocka_unit_test(ids_of_wrong_length_case_or_digits_are_not_reported),
		cmocka_unit_test(names_that_only_look_like_containers_are_not_reported),
		cmocka_unit_test(pods_outside_kubepods_or_with_bad_uids_are_not_reported),
		cmocka_unit_test(slurm_names_outside_a_slurm_root_or_malformed_are_not_reported),
		cmocka_unit_test(unit_names_with_foreign_bytes_are_not_units),
		cmocka_unit_test(paths_the_kernel_cannot_write_are_refused_whole),
		cmocka_unit_test(truncated_paths_drop_their_cut_first_component),
		cmocka_unit_test(long_paths_are_read_to_the_end),
		cmocka_unit_test(deep_nesting_counts_every_container),
		cmocka_unit_test(over_long_names_fit_no_field),
		cmocka_unit_test(short_id_is_the_first_twelve_digits_of_a_valid_id),
		cmocka_unit_test(container_id_check_wants_exactly_64_lowercase_hex),
		cmocka_unit_test(runtime_and_qos_names_are_stable),
		cmocka_unit_test(a_second_parse_leaves_nothing_of_the_first),
		cmocka_unit_test(equal_contexts_are_equal_bytes),
		cmocka_unit_test(only_len_bytes_are_read),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
