/* args.c: numeric option values */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "args.h"
#include "err.h"

long tf_arg_long(const char *s, const char *opt, long lo, long hi)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (!*s || *end || errno || v < lo || v > hi)
		tf_usage_die("%s must be an integer from %ld to %ld, not '%s'", opt, lo, hi, s);
	return v;
}

double tf_arg_double(const char *s, const char *opt, double lo, double hi)
{
	char *end;
	double v = strtod(s, &end);

	if (!*s || *end || !(v >= lo && v <= hi))
		tf_usage_die("%s must be a number from %g to %g, not '%s'", opt, lo, hi, s);
	return v;
}

unsigned long long tf_arg_u64(const char *s, const char *opt)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (!*s || *s == '-' || *end || errno)
		tf_usage_die("%s must be a non-negative integer, not '%s'", opt, s);
	return v;
}

unsigned long long tf_arg_bytes(const char *s, const char *opt)
{
	char *end;
	unsigned long long v;
	int shift = 0;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (*end && !end[1]) {
		switch (*end) {
		case 'K': case 'k': shift = 10; end++; break;
		case 'M': case 'm': shift = 20; end++; break;
		case 'G': case 'g': shift = 30; end++; break;
		}
	}
	if (!*s || *s < '0' || *s > '9' || *end || errno || v == 0 || v > ~0ull >> shift)
		tf_usage_die("%s must be a count of bytes above 0, with K, M or G for 2^10, 2^20 or 2^30, not '%s'",
			     opt, s);
	return v << shift;
}
