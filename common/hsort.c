/* SPDX-License-Identifier: Apache-2.0 */
#include "hsort.h"

#include <string.h>

static void swap(unsigned char *a, unsigned char *b, size_t size)
{
	unsigned char tmp[HSORT_MAX_SIZE];

	memcpy(tmp, a, size);
	memcpy(a, b, size);
	memcpy(b, tmp, size);
}

static void sift(unsigned char *v, size_t root, size_t n, size_t size, int (*cmp)(const void *, const void *, void *),
		 void *ctx)
{
	for (;;) {
		size_t c = 2 * root + 1;

		if (c >= n)
			return;
		if (c + 1 < n && cmp(v + c * size, v + (c + 1) * size, ctx) < 0)
			c++;
		if (cmp(v + root * size, v + c * size, ctx) >= 0)
			return;
		swap(v + root * size, v + c * size, size);
		root = c;
	}
}

void hsort_r(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *, void *), void *ctx)
{
	unsigned char *v = base;

	if (n < 2 || size == 0 || size > HSORT_MAX_SIZE)
		return;
	for (size_t i = n / 2; i > 0; i--)
		sift(v, i - 1, n, size, cmp, ctx);
	for (size_t end = n - 1; end > 0; end--) {
		swap(v, v + end * size, size);
		sift(v, 0, end, size, cmp, ctx);
	}
}

/* hsort's comparison, through hsort_r's context. */
static int cmp_plain(const void *a, const void *b, void *ctx)
{
	int (*const *cmp)(const void *, const void *) = ctx;

	return (*cmp)(a, b);
}

void hsort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	hsort_r(base, n, size, cmp_plain, &cmp);
}
