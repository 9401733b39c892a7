/// `first...last` as an array, or empty when `last < first`: a closed range
/// with crossed bounds traps, and a trap would end the whole test run
/// instead of failing one assertion.
func consecutive<T: Strideable>(_ first: T, through last: T) -> [T] where T.Stride: SignedInteger {
    first <= last ? Array(first...last) : []
}
