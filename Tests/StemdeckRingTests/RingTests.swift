import Testing
import StemdeckRing
import Foundation

/// Calls `body` with a ring of every capacity in `capacities` whose counters start at every
/// offset below its capacity, so wrap-around is always covered (swift-collections' withEvery…).
func withEveryRing(capacities: [Int] = [1, 2, 4, 8], _ body: (Int, Int, inout Producer<Int>, inout Consumer<Int>) -> Void) {
  for capacity in capacities {
    for offset in 0..<capacity {
      let ends = SPSCRing.make(minimumCapacity: capacity, of: Int.self)
      var p = ends.producer
      var c = ends.consumer
      for i in 0..<offset { #expect(p.push(i) == true); #expect(c.pop() == i) }
      body(capacity, offset, &p, &c)
    }
  }
}

@Suite struct RingTests {
  @Test func capacityRoundsUpToPowerOfTwo() {
    for (asked, expected) in [(1, 1), (2, 2), (3, 4), (5, 8), (1000, 1024)] {
      let ends = SPSCRing.make(minimumCapacity: asked, of: Int.self)
      #expect(ends.producer.capacity == expected)
    }
  }

  @Test func pushPopEveryCapacityOffsetAndCount() {
    withEveryRing { capacity, offset, p, c in
      for count in 0...capacity {
        for i in 0..<count { #expect(p.push(100 + i) == true, "capacity \(capacity) offset \(offset) count \(count)") }
        if count == capacity { #expect(p.push(-1) == false, "full ring accepted a push (capacity \(capacity))") }
        #expect(c.availableCount() == count)
        #expect(p.freeCount() == capacity - count)
        for i in 0..<count { #expect(c.pop() == 100 + i, "capacity \(capacity) offset \(offset) count \(count)") }
        #expect(c.pop() == nil)
      }
    }
  }

  @Test func bulkWriteReadAcrossTheSeam() {
    withEveryRing(capacities: [1, 2, 4, 8, 16]) { capacity, offset, p, c in
      for count in 0...capacity {
        let source = (0..<count).map { $0 * 3 + offset }
        let written = source.withUnsafeBufferPointer { p.write(from: $0) }
        #expect(written == count)
        let segments = c.readableSegments()
        #expect(segments.count == count)
        var out = [Int](repeating: -1, count: count + 2)
        let read = out.withUnsafeMutableBufferPointer { c.read(into: $0) }
        #expect(read == count)
        #expect(Array(out.prefix(count)) == source, "capacity \(capacity) offset \(offset) count \(count)")
      }
    }
  }

  @Test func partialWriteStopsWhenFull() {
    let ends = SPSCRing.make(minimumCapacity: 4, of: Int.self)
    var p = ends.producer
    var c = ends.consumer
    let written = [1, 2, 3, 4, 5, 6].withUnsafeBufferPointer { p.write(from: $0) }
    #expect(written == 4)
    #expect(c.pop() == 1)
    #expect([7, 8].withUnsafeBufferPointer { p.write(from: $0) } == 1)
    var out = [Int](repeating: 0, count: 8)
    #expect(out.withUnsafeMutableBufferPointer { c.read(into: $0) } == 4)
    #expect(Array(out.prefix(4)) == [2, 3, 4, 7])
  }

  @Test func discardUpToCounter() {
    let ends = SPSCRing.make(minimumCapacity: 8, of: Int.self)
    var p = ends.producer
    var c = ends.consumer
    for i in 0..<5 { _ = p.push(i) }
    #expect(c.discard(upTo: 7) == false, "discarding past the written data must report not-there-yet")
    #expect(c.readCounter == 5)
    for i in 5..<9 { _ = p.push(i) }
    #expect(c.discard(upTo: 7) == true)
    #expect(c.pop() == 7)
  }

  @Test func storageOutlivesEitherHandle() {
    let ends = SPSCRing.make(minimumCapacity: 4, of: Int.self)
    var p = ends.producer
    var c = ends.consumer
    _ = p.push(42)
    #expect(c.isAbandoned == false)
    _ = consume p
    #expect(c.isAbandoned == true)
    #expect(c.pop() == 42)
  }

  /// Two threads, millions of sequential values: every element arrives once, in order.
  @Test func twoThreadStress() async {
    let count = ProcessInfo.processInfo.environment["STEMDECK_LONG_TESTS"] != nil ? 50_000_000 : 3_000_000
    let ends = SPSCRing.make(minimumCapacity: 1024, of: Int.self)
    let box = ProducerBox(ends.producer)
    var c = ends.consumer
    let producerThread = Thread {
      var p = box.take()
      var next = 0
      var chunk = [Int](repeating: 0, count: 37)
      while next < count {
        // Alternate single pushes and bulk writes so both paths race with the reader.
        if next % 3 == 0 {
          if p.push(next) { next += 1 }
        } else {
          let n = min(chunk.count, count - next)
          for i in 0..<n { chunk[i] = next + i }
          next += chunk.withUnsafeBufferPointer { p.write(from: UnsafeBufferPointer(rebasing: $0[0..<n])) }
        }
      }
    }
    producerThread.start()
    var expected = 0
    var outOfOrder = 0
    var buffer = [Int](repeating: 0, count: 53)
    while expected < count {
      if expected % 2 == 0, let v = c.pop() {
        if v != expected { outOfOrder += 1 }
        expected += 1
      } else {
        let n = buffer.withUnsafeMutableBufferPointer { c.read(into: $0) }
        for i in 0..<n where buffer[i] != expected + i { outOfOrder += 1 }
        expected += n
      }
    }
    #expect(outOfOrder == 0)
    #expect(expected == count)
    #expect(c.pop() == nil)
  }
}

/// Moves a producer into another thread's closure (a ~Copyable value can't be captured directly).
final class ProducerBox: @unchecked Sendable {
  var producer: Producer<Int>?
  init(_ p: consuming Producer<Int>) { producer = consume p }
  func take() -> Producer<Int> {
    let p = producer.take()!
    return p
  }
}
