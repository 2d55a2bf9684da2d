import Testing

/// Every suite that runs a `bobao serve` against PulseAudio, one test at a time: they measure speech in
/// real time, and a CPU-hungry neighbour (a thousand clients, a flood of lines) would distort what a
/// recording hears.
@Suite(.serialized)
enum SoundSuites {}
