/* args.h: option values checked the same way in every program; a bad one
 * is a usage error (exit 2) that names the option and the allowed range */
#ifndef TF_ARGS_H
#define TF_ARGS_H

long tf_arg_long(const char *s, const char *opt, long lo, long hi);
double tf_arg_double(const char *s, const char *opt, double lo, double hi);
unsigned long long tf_arg_u64(const char *s, const char *opt);
/* a count of bytes above 0, with an optional K, M or G (powers of 1024) */
unsigned long long tf_arg_bytes(const char *s, const char *opt);

#endif
