import BobaoSpeech
import CNoAudioDevice
import Testing

/// eSpeak NG starts without an audio device of its own: its call to pcaudiolib's
/// create_audio_device_object reaches Bobao's definition, which opens nothing (see no_audio_device.c).
struct NoAudioDeviceTests {
    @Test func eSpeakAskedBobaosDefinitionForItsDevice() throws {
        _ = try EspeakSynthesizer.shared()
        #expect(bobao_no_audio_device_calls() >= 1, "libespeak-ng's call was bound to pcaudiolib's own definition")
    }
}
