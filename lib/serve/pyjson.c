/* pyjson.c: json.dumps and str() as Python writes them (pyjson.h) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pyjson.h"

/* repr(float): the shortest digits that read back, fixed between 1e-4 and
 * 1e16, else d.ddde+XX */
static void py_float(tf_sbuf *b, double x)
{
	char buf[40], digits[24];
	int prec, exp10;

	if (isnan(x)) {
		tf_sbuf_puts(b, "NaN");
		return;
	}
	if (isinf(x)) {
		tf_sbuf_puts(b, x > 0 ? "Infinity" : "-Infinity");
		return;
	}
	for (prec = 1; prec <= 17; prec++) {
		snprintf(buf, sizeof buf, "%.*e", prec - 1, x);
		if (strtod(buf, NULL) == x)
			break;
	}
	/* buf: [-]d[.ddd]e[+-]XX */
	char *p = buf, *e = strchr(buf, 'e');
	int neg = *p == '-', nd = 0;
	if (neg)
		p++;
	for (; p < e; p++)
		if (*p != '.')
			digits[nd++] = *p;
	digits[nd] = 0;
	exp10 = atoi(e + 1);
	while (nd > 1 && digits[nd - 1] == '0')
		digits[--nd] = 0;
	if (neg)
		tf_sbuf_puts(b, "-");
	if (exp10 >= -4 && exp10 < 16) {
		if (exp10 < 0) {
			tf_sbuf_puts(b, "0.");
			for (int i = 0; i < -exp10 - 1; i++)
				tf_sbuf_puts(b, "0");
			tf_sbuf_puts(b, digits);
		} else if (nd <= exp10 + 1) {
			tf_sbuf_puts(b, digits);
			for (int i = nd; i < exp10 + 1; i++)
				tf_sbuf_puts(b, "0");
			tf_sbuf_puts(b, ".0");
		} else {
			tf_sbuf_add(b, digits, exp10 + 1);
			tf_sbuf_puts(b, ".");
			tf_sbuf_puts(b, digits + exp10 + 1);
		}
		return;
	}
	tf_sbuf_add(b, digits, 1);
	if (nd > 1) {
		tf_sbuf_puts(b, ".");
		tf_sbuf_puts(b, digits + 1);
	}
	tf_sbuf_printf(b, "e%c%02d", exp10 < 0 ? '-' : '+', abs(exp10));
}

static void py_string(tf_sbuf *b, const char *s, size_t n)
{
	tf_sbuf_puts(b, "\"");
	for (size_t i = 0; i < n; i++) {
		unsigned char c = s[i];
		switch (c) {
		case '"': tf_sbuf_puts(b, "\\\""); break;
		case '\\': tf_sbuf_puts(b, "\\\\"); break;
		case '\n': tf_sbuf_puts(b, "\\n"); break;
		case '\r': tf_sbuf_puts(b, "\\r"); break;
		case '\t': tf_sbuf_puts(b, "\\t"); break;
		case '\b': tf_sbuf_puts(b, "\\b"); break;
		case '\f': tf_sbuf_puts(b, "\\f"); break;
		default:
			if (c < 0x20)
				tf_sbuf_printf(b, "\\u%04x", c);
			else
				tf_sbuf_add(b, (const char *)&c, 1);
		}
	}
	tf_sbuf_puts(b, "\"");
}

void tf_py_dumps(tf_sbuf *b, const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: {
		const char *k;
		json_t *x;
		int first = 1;
		tf_sbuf_puts(b, "{");
		json_object_foreach((json_t *)v, k, x) {
			if (!first)
				tf_sbuf_puts(b, ", ");
			first = 0;
			py_string(b, k, strlen(k));
			tf_sbuf_puts(b, ": ");
			tf_py_dumps(b, x);
		}
		tf_sbuf_puts(b, "}");
		break;
	}
	case JSON_ARRAY: {
		size_t i;
		json_t *x;
		tf_sbuf_puts(b, "[");
		json_array_foreach(v, i, x) {
			if (i)
				tf_sbuf_puts(b, ", ");
			tf_py_dumps(b, x);
		}
		tf_sbuf_puts(b, "]");
		break;
	}
	case JSON_STRING: py_string(b, json_string_value(v), json_string_length(v)); break;
	case JSON_INTEGER: tf_sbuf_printf(b, "%lld", (long long)json_integer_value(v)); break;
	case JSON_REAL: py_float(b, json_real_value(v)); break;
	case JSON_TRUE: tf_sbuf_puts(b, "true"); break;
	case JSON_FALSE: tf_sbuf_puts(b, "false"); break;
	case JSON_NULL: tf_sbuf_puts(b, "null"); break;
	}
}

void tf_py_str(tf_sbuf *b, const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_STRING: tf_sbuf_add(b, json_string_value(v), json_string_length(v)); break;
	case JSON_TRUE: tf_sbuf_puts(b, "True"); break;
	case JSON_FALSE: tf_sbuf_puts(b, "False"); break;
	case JSON_NULL: tf_sbuf_puts(b, "None"); break;
	case JSON_REAL:
		if (isinf(json_real_value(v)) || isnan(json_real_value(v))) {
			double x = json_real_value(v);
			tf_sbuf_puts(b, isnan(x) ? "nan" : x > 0 ? "inf" : "-inf");
		} else {
			py_float(b, json_real_value(v));
		}
		break;
	default: tf_py_dumps(b, v); break;
	}
}
