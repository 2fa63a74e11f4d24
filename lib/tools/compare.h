/*
 * compare.h: the figures tf-gate reports, gathered one row at a time.
 *
 * For rows a and b of the same width V, p = softmax(a), q = softmax(b):
 *
 *   bit-equal   the 4V bytes are the same
 *   max abs     max over all values of |a_i - b_i|, in double; two values that
 *               differ where one is NaN count as infinitely far apart
 *   NMSE        sum (a_i - b_i)^2 / sum a_i^2 over every value of every row
 *   KL(A||B)    sum_i p_i (log p_i - log q_i), in double, log p_i = a_i -
 *               logsumexp(a); per row, then mean and max over rows
 *   top-1       argmax a == argmax b (ties go to the first index)
 *   NLL         logsumexp(a) - a[target], for rows that have a target
 *
 * A row holding NaN, or +inf, or nothing but -inf has no softmax: its KL
 * and NLL are NaN, which fails any threshold.
 */
#ifndef TF_COMPARE_H
#define TF_COMPARE_H

#include <stdint.h>

typedef struct {
	uint32_t cols;          /* V */
	uint64_t rows;          /* rows seen */
	uint64_t equal;         /* rows bit-equal */
	uint64_t top1;          /* rows whose argmax agree */
	double max_abs;         /* -1 before the first row */
	uint64_t max_abs_row;   /* first row where max_abs was reached */
	double sq_diff, sq_a;   /* NMSE numerator and denominator */
	double kl_sum, kl_max;
	uint64_t kl_max_row;
	uint64_t scored;        /* rows with a target */
	double nll_a, nll_b;    /* NLL sums over the scored rows */
	double *ea;             /* (V) scratch: softmax(a) */
} tf_cmp;

/* -1 when the scratch row cannot be allocated */
int tf_cmp_init(tf_cmp *c, uint32_t cols);
/* adds one row pair; b NULL scores a alone (only NLL); target < 0: none,
 * else 0 <= target < V */
void tf_cmp_row(tf_cmp *c, const float *a, const float *b, long target);
void tf_cmp_free(tf_cmp *c);

/* logsumexp of x (n) in double, stable (max first); p (n) = softmax(x)
 * when p is not NULL; NaN when x has no softmax */
double tf_logsumexp(const float *x, uint32_t n, double *p);

double tf_cmp_nmse(const tf_cmp *c);
double tf_cmp_kl_mean(const tf_cmp *c);
double tf_cmp_top1(const tf_cmp *c);    /* share of rows, 0..1 */
double tf_cmp_ppl_a(const tf_cmp *c);
double tf_cmp_ppl_b(const tf_cmp *c);

#endif
