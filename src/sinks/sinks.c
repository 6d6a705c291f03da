/* SPDX-License-Identifier: MIT */
#include "sinks/sink.h"

#include <stdio.h>

const struct sink_ops *const sinks_all[] = {
    &sink_runinfo, &sink_csv,    &sink_buildlog, &sink_summary, &sink_targets, &sink_prom,
    &sink_pushgw,  &sink_sqlite, &sink_otlp,     &sink_units,   &sink_report,  NULL,
};
