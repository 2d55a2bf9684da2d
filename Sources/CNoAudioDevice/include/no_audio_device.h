#ifndef BOBAO_NO_AUDIO_DEVICE_H
#define BOBAO_NO_AUDIO_DEVICE_H

/// Whether this program's definition of pcaudiolib's create_audio_device_object is the one libespeak-ng
/// calls (1), so eSpeak NG opens no audio device of its own. Checked by a test.
int bobao_no_audio_device_calls(void);

#endif
