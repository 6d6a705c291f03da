/* SPDX-License-Identifier: MIT */
#pragma once
/* cmocka's assert_float_equal passes when a figure is NaN (its check is
 * that |a - b| is not over eps, which NaN never is): a figure never
 * computed would pass any test. Included after cmocka.h. */
#include <math.h>

#undef assert_float_equal
#define assert_float_equal(a, b, eps)                                                              \
        do {                                                                                       \
                double a_ = (a), b_ = (b), e_ = (eps);                                             \
                if (isnan(a_) || isnan(b_) ? !(isnan(a_) && isnan(b_)) : fabs(a_ - b_) > e_)      \
                        fail_msg("%s is %.17g, want %.17g (within %g)", #a, a_, b_, e_);           \
        } while (0)
