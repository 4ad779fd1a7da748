import Glibc
import Synchronization

/// Wakes the control loop (StemdeckConsole's `ControlLoop`, docs/architecture.md, *The control
/// loop*) when something it serves happened on another thread: JACK's notification thread
/// (xruns, the server going away, ports and connections changing, a new sample rate) and the
/// signal handlers. The loop owns a pipe and publishes its write end here; `wakeControlLoop()`
/// writes one byte to it with write(2), which is async-signal-safe and never blocks (the
/// descriptor is non-blocking; a full pipe means the loop is woken already). Never called from the process callback: the realtime path makes no syscalls;
/// what the renderer reports reaches the loop on its next tick.
public enum ControlWakeup {
  /// The write end of the loop's wake-up pipe, or -1 when no loop waits.
  public static let descriptor = Atomic<Int32>(-1)
}

/// Wakes the control loop, if one waits (see `ControlWakeup`).
public func wakeControlLoop() {
  let fd = ControlWakeup.descriptor.load(ordering: .relaxed)
  guard fd >= 0 else { return }
  var one: UInt8 = 1
  _ = write(fd, &one, 1)
}
