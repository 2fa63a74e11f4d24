/*
 * codes: the MLX bit packing (a row's codes as one LSB-first bit stream,
 * code j in stream bits [j B, j B + B), stream bit s in bit s mod 32 of
 * word s / 32, as mlx's quantize and extract_bits lay them), known words,
 * and pack/unpack round trips for every bits value and group.
 */
#include <stdlib.h>
#include <string.h>

#include "model/weight.h"
#include "pack/quant.h"
#include "tap.h"

static int vec(int bits, const uint8_t *q, int n, const uint32_t *want, int nw)
{
	uint32_t out[8] = { 0 };

	tf_codes_pack(q, n, bits, out);
	return !memcmp(out, want, nw * 4);
}

int main(void)
{
	uint8_t q[64];
	int b;

	/* words worked out by hand from the layout above */
	for (int i = 0; i < 8; i++)
		q[i] = i;
	ok(vec(4, q, 8, (uint32_t[]){ 0x76543210 }, 1), "B=4: codes 0..7 -> 0x76543210");
	for (int i = 0; i < 16; i++)
		q[i] = i % 4;
	ok(vec(2, q, 16, (uint32_t[]){ 0xE4E4E4E4 }, 1), "B=2: codes (0,1,2,3)x4 -> 0xE4E4E4E4");
	q[0] = 1, q[1] = 2, q[2] = 3, q[3] = 4;
	ok(vec(8, q, 4, (uint32_t[]){ 0x04030201 }, 1), "B=8: codes 1,2,3,4 -> 0x04030201");
	for (int i = 0; i < 32; i++)
		q[i] = i % 8;
	ok(vec(3, q, 32, (uint32_t[]){ 0x88FAC688, 0xC688FAC6, 0xFAC688FA }, 3),
	   "B=3: codes (0..7)x4 -> 0x88FAC688 0xC688FAC6 0xFAC688FA");
	for (int i = 0; i < 32; i++)
		q[i] = i;
	ok(vec(5, q, 32, (uint32_t[]){ 0x8A418820, 0xC5A92839, 0xCA307B9A, 0x38BDAB49, 0xFFBBCDEB }, 5),
	   "B=5: codes 0..31 -> their five words");
	for (int i = 0; i < 16; i++)
		q[i] = i;
	ok(vec(6, q, 16, (uint32_t[]){ 0x440C2040, 0xA2481C61, 0x3CE34C2C }, 3),
	   "B=6: codes 0..15 -> 0x440C2040 0xA2481C61 0x3CE34C2C");
	/* B=3 code 10 straddles: low 2 bits at bits 30-31 of word 0, high bit at bit 0 of word 1 */
	memset(q, 0, 32);
	q[10] = 7;
	{
		uint32_t w[3];
		tf_codes_pack(q, 32, 3, w);
		ok(w[0] == 0xC0000000u && w[1] == 1 && w[2] == 0, "B=3: code 10 straddles words 0 and 1");
	}

	/* round trips: random codes, every bits value and group, through the
	 * packer, tf_code_get, and the row dequantization tf-run uses */
	for (b = 2; b <= 8; b++) {
		static const int groups[] = { 32, 64, 128 };
		if (b == 7)
			continue;
		for (int g = 0; g < 3; g++) {
			int G = groups[g], rows = 5, cols = 3 * G, good = 1;
			int64_t words = (int64_t)cols * b / 32;
			uint8_t *codes = malloc(rows * cols);
			uint32_t *packed = malloc(rows * words * 4);
			uint16_t *sc = malloc(rows * 3 * 2), *bi = malloc(rows * 3 * 2);
			float *row = malloc(cols * sizeof *row);
			for (int i = 0; i < rows * cols; i++)
				codes[i] = (uint8_t)(rand() % (1 << b));
			for (int i = 0; i < rows * 3; i++) {
				sc[i] = tf_f32_to_bf16(0.25f * (i + 1));
				bi[i] = tf_f32_to_bf16(-1.0f * i);
			}
			for (int r = 0; r < rows; r++)
				tf_codes_pack(codes + r * cols, cols, b, packed + r * words);
			for (int r = 0; r < rows; r++)
				for (int c = 0; c < cols; c++)
					good &= tf_code_get(packed + r * words, c, b) == codes[r * cols + c];
			ok(good, "B=%d G=%d: pack then unpack gives every code back", b, G);
			{
				tf_weight w = { .fmt = TF_AFFINE, .rows = rows, .cols = cols, .bits = b, .group = G,
						.sdtype = TF_BF16, .data = packed, .scales = sc, .biases = bi };
				good = 1;
				for (int r = 0; r < rows; r++) {
					tf_weight_row(&w, r, row);
					for (int c = 0; c < cols; c++) {
						float s = tf_bf16_to_f32(sc[r * 3 + c / G]), o = tf_bf16_to_f32(bi[r * 3 + c / G]);
						good &= row[c] == s * (float)codes[r * cols + c] + o;
					}
				}
				ok(good, "B=%d G=%d: dequantized rows are s*q+b of the packed codes", b, G);
			}
			free(codes); free(packed); free(sc); free(bi); free(row);
		}
	}
	return done();
}
