extension ImageInfo {
    /// This header's reading, with a pixel size the structure walk found when
    /// the header gave none (a TIFF whose first directory lies past the
    /// bytes the sniff sees: the walk read it as the body streamed past).
    public func completed(by structure: ImageStructure) -> ImageInfo {
        guard width == nil || height == nil, let size = structure.size else { return self }
        return ImageInfo(format: format, width: size.width, height: size.height)
    }
}
