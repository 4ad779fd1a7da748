#ifndef STEMDECK_CZITA_H
#define STEMDECK_CZITA_H

// zita-resampler's VResampler (C++) behind a C interface for Swift: the `fast` quality's
// converter for a stem that holds a varispeed rate (docs/architecture.md, *Resampling*).
//
// Threads: `stemdeck_zita_make` and `stemdeck_zita_free` allocate and take zita's table mutex
// (Resampler_table::create/destroy): the control thread only. Everything else allocates nothing,
// takes no lock and makes no system call (VResampler::reset, set_phase, inpsize, inpdist and
// process read and write the instance's own buffers): the realtime thread may call it, through
// StemdeckEngine's RealtimeC.

#ifdef __cplusplus
extern "C" {
#endif

/// One VResampler, set up for one ratio.
typedef struct stemdeck_zita stemdeck_zita;

/// A VResampler set up for `ratio` (output rate / input rate, 1/64 … 256), `channels`
/// interleaved channels and a half filter length of `hlen` (8 … 96) at ratios ≥ 1; NULL when
/// zita refuses the setup or memory runs out.
stemdeck_zita *stemdeck_zita_make(double ratio, unsigned channels, unsigned hlen);

/// Frees it (NULL: nothing).
void stemdeck_zita_free(stemdeck_zita *z);

/// Forgets all input (VResampler::reset): the next output needs `stemdeck_zita_inpsize` frames.
void stemdeck_zita_reset(stemdeck_zita *z);

/// The fraction (0 ≤ p < 1) of an input frame at which the next output lies (VResampler::set_phase).
void stemdeck_zita_set_phase(stemdeck_zita *z, double p);

/// The filter's length in input frames (2 × its half length; VResampler::inpsize).
int stemdeck_zita_inpsize(const stemdeck_zita *z);

/// The next input frame's index minus the next output's position, in input frames
/// (VResampler::inpdist).
double stemdeck_zita_inpdist(const stemdeck_zita *z);

/// Converts interleaved `input` (NULL: that many frames of silence) into interleaved `output`;
/// `*used` and `*made` say how many input and output frames it took and made. It stops when the
/// output is full or when it needs more input than given.
void stemdeck_zita_process(
    stemdeck_zita *z, const float *input, unsigned input_frames, float *output, unsigned output_frames,
    unsigned *used, unsigned *made);

/// Instances made and not yet freed, in this process (tests count them).
long stemdeck_zita_live_count(void);

#ifdef __cplusplus
}
#endif

#endif
