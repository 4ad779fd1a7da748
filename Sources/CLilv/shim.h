// lilv (LV2 plugin discovery and instances) and the LV2 headers of the features stemdeck hosts:
// URID map/unmap, options, bounded block length, log, the worker, state (map/free path), patch
// messages. Control thread only, except what the renderer calls through a plugin's own `run`,
// `work_response` and `end_run` pointers (docs/architecture.md, *Plugin inserts*).
#include <stdarg.h>
#include <stdio.h>
#include <lilv/lilv.h>
#include <lv2/core/lv2.h>
#include <lv2/urid/urid.h>
#include <lv2/options/options.h>
#include <lv2/buf-size/buf-size.h>
#include <lv2/log/log.h>
#include <lv2/atom/atom.h>
#include <lv2/parameters/parameters.h>
#include <lv2/worker/worker.h>
#include <lv2/state/state.h>
#include <lv2/patch/patch.h>

// LV2's log feature passes printf-style variadic functions, which Swift cannot define. A
// plugin's messages are dropped: a plugin may log from its `run` (the realtime thread), where
// formatting or writing them would not be safe.
static inline int stemdeck_lv2_log_vprintf(LV2_Log_Handle handle, LV2_URID type, const char *fmt, va_list ap) {
  (void)handle; (void)type; (void)fmt; (void)ap;
  return 0;
}

static inline int stemdeck_lv2_log_printf(LV2_Log_Handle handle, LV2_URID type, const char *fmt, ...) {
  (void)handle; (void)type; (void)fmt;
  return 0;
}

/// Fills an LV2_Log_Log with the functions above.
static inline void stemdeck_lv2_log_init(LV2_Log_Log *log) {
  log->handle = 0;
  log->printf = stemdeck_lv2_log_printf;
  log->vprintf = stemdeck_lv2_log_vprintf;
}
