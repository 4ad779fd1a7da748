import CLilv
import Foundation
import StemdeckEngine
import StemdeckText

// The features an insert's plugin instances are given at instantiation, and the LV2 worker
// thread that runs their `work` (docs/architecture.md, *Plugin inserts*). Control thread, but
// the worker thread's loop.

/// The features an instance is given, kept alive as long as it lives: URID map and unmap,
/// options (sample rate, min/max block length), bounded block length, log, and for each
/// instance with plumbing (InsertAtoms.swift) its own worker schedule, whose handle is it.
final class PluginFeatures: @unchecked Sendable {
  private let map = UnsafeMutablePointer<LV2_URID_Map>.allocate(capacity: 1)
  private let unmap = UnsafeMutablePointer<LV2_URID_Unmap>.allocate(capacity: 1)
  private let log = UnsafeMutablePointer<LV2_Log_Log>.allocate(capacity: 1)
  private let options = UnsafeMutablePointer<LV2_Options_Option>.allocate(capacity: 4)
  private let numbers = UnsafeMutableRawPointer.allocate(byteCount: 16, alignment: 8)
  private let uris: [UnsafeMutablePointer<CChar>]
  /// Per instance: the schedule feature's data, the features and the null-terminated list.
  private let schedules: UnsafeMutablePointer<LV2_Worker_Schedule>
  private let list: UnsafeMutablePointer<LV2_Feature>
  private let pointers: UnsafeMutablePointer<UnsafePointer<LV2_Feature>?>
  private let instances: Int
  private static let count = 6

  /// The features for `plumbing.count` instances (nil: that one gets no worker schedule).
  init(host: PluginHost, sampleRate: Double, maxBlockFrames: Int, plumbing: [UnsafeMutablePointer<InsertPlumbing>?]) {
    let context = Unmanaged.passUnretained(host.urids).toOpaque()
    map.initialize(
      to: LV2_URID_Map(
        handle: context,
        map: { handle, uri in
          guard let handle, let uri else { return 0 }
          return Unmanaged<URIDMap>.fromOpaque(handle).takeUnretainedValue().map(String(cString: uri))
        }))
    unmap.initialize(
      to: LV2_URID_Unmap(
        handle: context,
        unmap: { handle, id in
          guard let handle else { return nil }
          return Unmanaged<URIDMap>.fromOpaque(handle).takeUnretainedValue().unmap(id)
        }))
    log.initialize(to: LV2_Log_Log())
    stemdeck_lv2_log_init(log)
    let rate = numbers.assumingMemoryBound(to: Float.self)
    rate.pointee = Float(sampleRate)
    let lengths = (numbers + 8).assumingMemoryBound(to: Int32.self)
    lengths[0] = 1
    lengths[1] = Int32(maxBlockFrames)
    let u = host.urids
    let instance = LV2_Options_Context(0)
    options[0] = LV2_Options_Option(
      context: instance, subject: 0, key: u.map(LV2URI.sampleRate), size: 4, type: u.map(LV2URI.atomFloat), value: rate)
    options[1] = LV2_Options_Option(
      context: instance, subject: 0, key: u.map(LV2URI.bufSize + "minBlockLength"), size: 4, type: u.map(LV2URI.atomInt),
      value: lengths)
    options[2] = LV2_Options_Option(
      context: instance, subject: 0, key: u.map(LV2URI.bufSize + "maxBlockLength"), size: 4, type: u.map(LV2URI.atomInt),
      value: lengths + 1)
    options[3] = LV2_Options_Option(context: instance, subject: 0, key: 0, size: 0, type: 0, value: nil)
    uris = [LV2URI.uridMap, LV2URI.uridUnmap, LV2URI.options, LV2URI.boundedBlockLength, LV2URI.log, LV2URI.workerSchedule].map {
      (u: String) -> UnsafeMutablePointer<CChar> in strdup(u)!
    }
    instances = plumbing.count
    schedules = .allocate(capacity: max(1, instances))
    list = .allocate(capacity: Self.count * max(1, instances))
    pointers = .allocate(capacity: (Self.count + 1) * max(1, instances))
    for (k, p) in plumbing.enumerated() {
      (schedules + k).initialize(to: LV2_Worker_Schedule(handle: p.map { UnsafeMutableRawPointer($0) }, schedule_work: Self.schedule))
      let data: [UnsafeMutableRawPointer?] = [
        UnsafeMutableRawPointer(map), UnsafeMutableRawPointer(unmap), UnsafeMutableRawPointer(options), nil,
        UnsafeMutableRawPointer(log), UnsafeMutableRawPointer(schedules + k)
      ]
      let features = list + k * Self.count, slots = pointers + k * (Self.count + 1)
      var n = 0
      for i in 0..<Self.count where i < Self.count - 1 || p != nil {
        (features + n).initialize(to: LV2_Feature(URI: uris[i], data: data[i]))
        slots[n] = UnsafePointer(features + n)
        n += 1
      }
      slots[n] = nil
    }
  }

  /// `insertScheduleWork` (StemdeckEngine) as the C type LV2's schedule feature holds: the same
  /// signature, its status enum being a C `unsigned int`.
  static let schedule: @convention(c) (LV2_Worker_Schedule_Handle?, UInt32, UnsafeRawPointer?) -> LV2_Worker_Status = {
    let f: @convention(c) (UnsafeMutableRawPointer?, UInt32, UnsafeRawPointer?) -> UInt32 = insertScheduleWork
    return unsafeBitCast(f, to: (@convention(c) (LV2_Worker_Schedule_Handle?, UInt32, UnsafeRawPointer?) -> LV2_Worker_Status).self)
  }()

  /// Calls `body` with instance `k`'s null-terminated feature array, which lilv passes to the plugin.
  func withFeatures<T>(instance k: Int = 0, _ body: (UnsafePointer<UnsafePointer<LV2_Feature>?>) -> T) -> T {
    body(pointers + k * (Self.count + 1))
  }

  func free() {
    map.deallocate()
    unmap.deallocate()
    log.deallocate()
    options.deallocate()
    numbers.deallocate()
    for u in uris { Foundation.free(u) }
    schedules.deallocate()
    list.deallocate()
    pointers.deallocate()
  }
}

/// The non-realtime thread that runs plugins' `work` (the LV2 worker extension): one per live
/// mixer, started with its first plugin that has a worker. It polls the instances' request rings
/// (the audio thread must not signal it: no system call there): every millisecond for a tenth of
/// a second after a request, every 5 ms when idle (measured live, idle: about 200 wake-ups a
/// second; a steady 1 ms poll made about 940, 1 % of a core). It takes its lock around each pass, so that `remove`
/// returns only once no `work` of that instance runs.
final class PluginWorker: @unchecked Sendable {
  private let lock = NSLock()
  private var plumbing: [UnsafeMutablePointer<InsertPlumbing>] = []
  private var thread: Thread?
  private var stopping = false

  /// Serves `p`'s requests from now on (the thread starts with the first).
  func add(_ p: UnsafeMutablePointer<InsertPlumbing>) {
    lock.withLock {
      plumbing.append(p)
      guard thread == nil else { return }
      let t = Thread { [weak self] in
        nameCurrentThread("stemdeck-lv2")
        self?.loop()
      }
      t.name = "stemdeck-lv2"
      thread = t
      t.start()
    }
  }

  /// Stops serving `p`: any `work` of it in progress has returned, requests left are dropped.
  func remove(_ p: UnsafeMutablePointer<InsertPlumbing>) {
    lock.withLock { plumbing.removeAll { $0 == p } }
  }

  /// Ends the thread (mixer shutdown).
  func stop() {
    lock.withLock { stopping = true }
  }

  private func loop() {
    var busyPasses = 0  // fast passes left after the last request
    while true {
      let worked = lock.withLock { () -> Int? in
        guard !stopping else { return nil }
        return plumbing.reduce(0) { $0 + InsertPlumbing.workRequests($1) }
      }
      guard let worked else { return }
      busyPasses = worked > 0 ? 100 : max(0, busyPasses - 1)
      usleep(busyPasses > 0 ? 1000 : 5000)
    }
  }
}
