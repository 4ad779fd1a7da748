#if canImport(Glibc)
import Glibc
#endif

@usableFromInline
func cosImpl(_ x: Double) -> Double { cos(x) }

@usableFromInline
func sinImpl(_ x: Double) -> Double { sin(x) }

@usableFromInline
func powImpl(_ x: Double, _ y: Double) -> Double { pow(x, y) }
