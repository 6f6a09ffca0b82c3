extension ImageStructure {
    /// The verdict on the body fed so far, with the format and size read
    /// from `head` (its first bytes: as many as the caller kept, at least the
    /// header), completed by what the walk learned.
    public func inspection(head: [UInt8]) -> ImageInspection {
        guard let info = ImageInfo.sniff(head) else { return head.isEmpty ? .empty : .notAnImage }
        switch verdict {
        case .broken(let problem): return .broken(info, problem: problem)
        case .complete(let end): return .image(info.completed(by: self), end: end)
        case .undecided: return .image(info.completed(by: self), end: nil)
        }
    }
}
