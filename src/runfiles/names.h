/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>

/* A run's files: the one place their names are spelled. Each file's writer
 * and reader are a module of this folder (samplecsv, runjson, targetsjson,
 * unitscsv). */

enum runfile {
        RUNFILE_CSV,          /* resources-<id>.csv */
        RUNFILE_RUN,          /* resources-<id>.run.json */
        RUNFILE_SUMMARY_TXT,  /* resources-<id>.summary.txt */
        RUNFILE_SUMMARY_JSON, /* resources-<id>.summary.json */
        RUNFILE_TARGETS,      /* resources-<id>.targets.json */
        RUNFILE_UNITS,        /* resources-<id>.units.csv */
        RUNFILE_BUILD_LOG,    /* build-<id>.log */
        RUNFILE_REPORT,       /* report-<id>.html */
        RUNFILE_TRACE,        /* trace-<id>.json */
        RUNFILE_BUILD_LOG_GZ, /* build-<id>.log.gz: the build log once compressed (sinks/logfile.h)
                               */
        RUNFILE_BUILD_LOG_GZ_TMP, /* build-<id>.log.gz.tmp: the .gz while it is written */
        RUNFILE_CCACHE_LOG,       /* resources-<id>.ccache.log: ccache's stats log of the build */
        RUNFILE_SCCACHE_LOG,      /* resources-<id>.sccache.log: the build's sccache server's log */
        RUNFILE_COUNT_
};

/* The file's name for run_id in dir: "<dir>/<name>" (as given: "x/" gives
 * "x//name", "" gives "/name"), or the bare name when dir is NULL.
 * malloc'd; NULL: ENOMEM (or an unknown kind). */
char *runfiles_path(const char *dir, const char *run_id, enum runfile kind);

/* The file of kind beside csv, a resources-<id>.csv path: the same
 * directory, the same id ("x/resources-ID.csv" -> "x/resources-ID.run.json",
 * "x/build-ID.log"). A csv not named resources-<id>.csv gives its name with
 * ".csv" replaced (when it ends so) for the resources-<id>.* kinds, and NULL
 * for the others. malloc'd; NULL: ENOMEM too. */
char *runfiles_beside(const char *csv, enum runfile kind);

/* The directory part of path, before its last '/' ("" for "/x"), as
 * runfiles_path() takes it; malloc'd. NULL when path has no '/' (the
 * current directory: a bare name) or on ENOMEM (*ret_oom set). */
char *runfiles_dir_of(const char *path, bool *ret_oom);
