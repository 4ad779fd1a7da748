#ifndef STEMDECK_CJACK_SHIM_H
#define STEMDECK_CJACK_SHIM_H
#include <jack/jack.h>
#include <jack/metadata.h>
#include <jack/uuid.h>
#include <jack/midiport.h>

/* jack_client_open is variadic, so Swift marks it unavailable (docs/architecture.md): this non-variadic
   wrapper passes no server name; the server is chosen by JACK_DEFAULT_SERVER, which stemdeck
   sets from --server before opening. */
static inline jack_client_t *stemdeck_client_open(const char *name, int no_start_server,
                                                  jack_status_t *status) {
  jack_options_t options = no_start_server ? JackNoStartServer : JackNullOption;
  return jack_client_open(name, options, status);
}
/* JACK_METADATA_PRETTY_NAME is a mutable global, which Swift 6 will not read directly. */
static inline const char *stemdeck_pretty_name_key(void) { return JACK_METADATA_PRETTY_NAME; }
#endif
