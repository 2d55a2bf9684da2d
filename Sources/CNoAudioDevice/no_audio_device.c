// eSpeak NG 1.51's espeak_Initialize asks pcaudiolib for an audio device even in AUDIO_OUTPUT_RETRIEVAL
// mode, where it never plays anything: pcaudiolib then connects to PulseAudio and opens a playback stream
// to probe it (falling back to ALSA). For Bobao that is a second sound-server connection at every start,
// a start-up that hangs as long as libpulse's connect timeout when the sound server accepts but does not
// answer, and `bobao render` or `bobao phonemes` touching the sound server at all.
//
// This definition takes the place of pcaudiolib's (the executable exports it, and the dynamic linker
// binds libespeak-ng's call to the first definition it finds, the executable's): no device. eSpeak NG
// handles a NULL device as pcaudiolib's own answer when no backend is available, and in retrieval mode
// it only hands samples to the synthesis callback.
#include <stdatomic.h>
#include "no_audio_device.h"

struct audio_object;

static atomic_int calls;

__attribute__((visibility("default")))
struct audio_object *create_audio_device_object(const char *device, const char *application_name,
                                                const char *description) {
    (void)device;
    (void)application_name;
    (void)description;
    atomic_fetch_add(&calls, 1);
    return 0;
}

int bobao_no_audio_device_calls(void) { return atomic_load(&calls); }
