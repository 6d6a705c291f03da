#include "model/figures.h"

#include <errno.h>
#include <math.h>

#include "model/run.h"

double figure_cached_ratio(int64_t steps, int64_t cached)
{
        if (steps <= 0 || cached < 0)
                return NAN;
        return (double)cached / (double)steps;
}

double figure_hit_ratio(uint64_t hits, uint64_t misses)
{
        double tot = (double)hits + (double)misses;

        return tot > 0 ? (double)hits / tot : NAN;
}

double figure_run_duration(double start_epoch, double end_epoch, double last_epoch,
                           bool *ret_to_last)
{
        bool to_last = false;
        double d = NAN;

        if (isfinite(start_epoch) && isfinite(end_epoch)) {
                d = end_epoch - start_epoch;
        } else if (isfinite(start_epoch) && isfinite(last_epoch)) {
                /* killed or still running: as far as the samples go */
                to_last = true;
                d = last_epoch - start_epoch;
        }
        if (ret_to_last)
                *ret_to_last = to_last;
        return d;
}

int figure_ninja_offset(const struct run_info *ri, double mtime, int64_t max_end_ms,
                        double *ret_off, bool *ret_before)
{
        double off;

        if (mtime < ri->start_epoch - 1 ||
            (isfinite(ri->end_epoch) && mtime > ri->end_epoch + FIGURE_NINJA_SLACK_S)) {
                if (ret_before)
                        *ret_before = mtime < ri->start_epoch;
                return -ESRCH;
        }
        off = mtime - ri->start_epoch - (double)max_end_ms / 1000.0;
        *ret_off = isfinite(off) && off >= 0 ? off : 0;
        return 0;
}
