/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_lake_store.c with every batch stored into PostgreSQL too, and both
 * lakes compared after each test (tests/lake_fixture.h, LAKE_FIXTURE_PG).
 */
#define LAKE_FIXTURE_PG 1
#include "test_lake_store.c"
