/*
 * sign1: exact 1-bit repack. Binary tensors (every group of 128 is
 * {-s, +s}) repack with zero error in every float dtype; one changed
 * magnitude, a NaN, or a width that is not a multiple of 128 is refused and
 * the first offending element named.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/weight.h"
#include "pack/quant.h"
#include "tap.h"

/* rows x cols of +-s_g in dtype, s_g varying by group, signs random */
static void *binary(int dtype, int rows, int cols)
{
	int es = dtype == TF_F32 ? 4 : 2;
	unsigned char *p = malloc(rows * cols * es);

	for (int r = 0; r < rows; r++)
		for (int c = 0; c < cols; c++) {
			float s = 0.01f * (1 + (r * 7 + c / 128) % 11);
			tf_put_scalar(p, dtype, r * cols + c, rand() & 1 ? s : -s);
		}
	return p;
}

int main(void)
{
	static const int dts[] = { TF_F32, TF_BF16, TF_F16 };
	static const char *dn[] = { "f32", "bf16", "f16" };
	int rows = 6, cols = 384;
	int64_t br, bc;

	for (int d = 0; d < 3; d++) {
		int es = dts[d] == TF_F32 ? 4 : 2, exact = 1;
		unsigned char *src = binary(dts[d], rows, cols), *scales = malloc(rows * 3 * es);
		uint8_t *bits = malloc(rows * cols / 8);
		float *row = malloc(cols * sizeof *row);
		tf_weight w = { .fmt = TF_SIGN1, .rows = rows, .cols = cols, .bits = 1, .group = 128,
				.sdtype = dts[d], .data = bits, .scales = scales };

		ok(tf_sign1_repack(src, dts[d], rows, cols, bits, scales, &br, &bc) == 1, "%s: binary tensor repacks",
		   dn[d]);
		for (int r = 0; r < rows; r++) {
			tf_weight_row(&w, r, row);
			for (int c = 0; c < cols; c++) {
				float v = tf_load_scalar(src, dts[d], r * cols + c);
				exact &= memcmp(&v, &row[c], 4) == 0;
			}
		}
		ok(exact, "%s: sign1 rows equal the source bit for bit", dn[d]);

		/* one magnitude one unit larger: not binary, and the place is named */
		{
			unsigned char *p = src + es * (4 * cols + 200);
			if (es == 4) {
				uint32_t u;
				memcpy(&u, p, 4);
				u++;
				memcpy(p, &u, 4);
			} else {
				uint16_t u;
				memcpy(&u, p, 2);
				u++;
				memcpy(p, &u, 2);
			}
			ok(tf_sign1_repack(src, dts[d], rows, cols, NULL, NULL, &br, &bc) == 0 && br == 4 &&
			   (bc == 200 || bc == 128), "%s: one flipped magnitude is not binary (row %lld col %lld)", dn[d],
			   (long long)br, (long long)bc);
		}
		free(src); free(scales); free(bits); free(row);
	}
	{
		float *f = binary(TF_F32, 2, 256);
		f[3] = NAN;
		ok(tf_sign1_repack(f, TF_F32, 2, 256, NULL, NULL, &br, &bc) == 0, "a NaN is not binary");
		free(f);
		f = binary(TF_F32, 2, 200);
		ok(tf_sign1_repack(f, TF_F32, 2, 200, NULL, NULL, &br, &bc) == 0, "200 columns are not groups of 128");
		free(f);
		f = calloc(2 * 128, 4);
		for (int i = 0; i < 64; i++)
			f[2 * i] = -0.0f;
		ok(tf_sign1_repack(f, TF_F32, 2, 128, NULL, NULL, &br, &bc) == 1, "groups of signed zeros are binary");
		free(f);
	}
	return done();
}
