/* SPDX-License-Identifier: Apache-2.0 */
/* The Makefile defines both for this file alone (BUILD_ID_OBJS), from debian/changelog and git describe. */
#include "version.h"

const char tracer_version[] = TRACER_VERSION, tracer_commit[] = TRACER_COMMIT;
