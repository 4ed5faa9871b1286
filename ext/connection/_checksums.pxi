# The v5 segments' checksums (CRC-24, CRC-32) and the table of supported protocol versions:
# included in ``_framing.pyx``.

cdef uint32_t CRC24_INIT = _segment.CRC24_INIT
cdef uint32_t CRC24_POLY = _segment.CRC24_POLY
cdef uint32_t CRC32_INITIAL = _segment.CRC32_INITIAL
cdef Py_ssize_t MAX_PAYLOAD = _segment.Segment.MAX_PAYLOAD_LENGTH
cdef uint32_t CRC24_TABLE[256]
cdef uint32_t CRC32_TABLE[8][256]
cdef bint SUPPORTED[128]

_CrcException = _segment.CrcException
_SegmentHeader = _segment.SegmentHeader
_driver_process_io_buffer = Connection.process_io_buffer


cdef void _init_tables():
    cdef uint32_t c
    cdef int i, k
    for i in range(256):
        c = (<uint32_t>i) << 16
        for k in range(8):
            c <<= 1
            if c & 0x1000000:
                c ^= CRC24_POLY
        CRC24_TABLE[i] = c & 0xFFFFFF
        c = i
        for k in range(8):
            c = (c >> 1) ^ (0xEDB88320 if c & 1 else 0)
        CRC32_TABLE[0][i] = c
    for i in range(256):
        for k in range(1, 8):
            c = CRC32_TABLE[k - 1][i]
            CRC32_TABLE[k][i] = (c >> 8) ^ CRC32_TABLE[0][c & 0xFF]
    for i in range(128):
        SUPPORTED[i] = i in ProtocolVersion.SUPPORTED_VERSIONS


_init_tables()


cdef inline uint32_t _crc24(uint64_t data, int length) noexcept nogil:
    cdef uint32_t crc = CRC24_INIT
    cdef int i
    for i in range(length):
        crc = ((crc << 8) & 0xFFFFFF) ^ CRC24_TABLE[((crc >> 16) ^ <uint32_t>(data & 0xFF)) & 0xFF]
        data >>= 8
    return crc


cdef inline uint32_t _le32(const unsigned char *p) noexcept nogil:
    return p[0] | (<uint32_t>p[1] << 8) | (<uint32_t>p[2] << 16) | (<uint32_t>p[3] << 24)


cdef inline uint64_t _le(const unsigned char *p, int n) noexcept nogil:
    cdef uint64_t v = 0
    cdef int i
    for i in range(n):
        v |= (<uint64_t>p[i]) << (8 * i)
    return v


cdef uint32_t _crc32(const unsigned char *p, Py_ssize_t n, uint32_t value) noexcept nogil:
    cdef uint32_t crc = ~value
    cdef uint32_t one, two
    while n >= 8:
        one = _le32(p) ^ crc
        two = _le32(p + 4)
        crc = (CRC32_TABLE[7][one & 0xFF] ^ CRC32_TABLE[6][(one >> 8) & 0xFF] ^
               CRC32_TABLE[5][(one >> 16) & 0xFF] ^ CRC32_TABLE[4][one >> 24] ^
               CRC32_TABLE[3][two & 0xFF] ^ CRC32_TABLE[2][(two >> 8) & 0xFF] ^
               CRC32_TABLE[1][(two >> 16) & 0xFF] ^ CRC32_TABLE[0][two >> 24])
        p += 8
        n -= 8
    while n > 0:
        crc = CRC32_TABLE[0][(crc ^ p[0]) & 0xFF] ^ (crc >> 8)
        p += 1
        n -= 1
    return ~crc


cdef Py_ssize_t ZLIB_FROM = 512  # from this length zlib's CRC-32 (vectorised) is faster than the table's


cdef uint32_t _checksum(const unsigned char *p, Py_ssize_t n, uint32_t value) except? 0:
    """CRC-32 of ``p[:n]``: the table's for short payloads, zlib's (the same function) for long ones."""
    if n < ZLIB_FROM:
        return _crc32(p, n, value)
    return _zlib_crc32(PyMemoryView_FromMemory(<char *>p, n, PyBUF_READ), value)


cdef inline void _put_le(char *out, uint64_t v, int n) noexcept nogil:
    cdef int i
    for i in range(n):
        out[i] = <char>((v >> (8 * i)) & 0xFF)


def crc24(data, length):
    """``cassandra.segment.compute_crc24(data, length)``: the CRC-24 of ``data``'s ``length`` low bytes
    (anything but two ``int``, or a length over 8, is the driver's, with its errors)."""
    if type(data) is not int or type(length) is not int or not 0 <= length <= 8:
        return _segment.compute_crc24(data, length)
    return _crc24(<uint64_t>(data & ((1 << (8 * length)) - 1)), length)


def crc32(data, value):
    """``cassandra.segment.compute_crc32(data, value)`` (``zlib.crc32``) for ``bytes`` and an ``int``
    value; anything else goes to ``zlib`` (whose errors, a ``TypeError`` for a float, are the driver's)."""
    if type(data) is not bytes or type(value) is not int or not 0 <= value <= 0xFFFFFFFF:
        return _segment.compute_crc32(data, value)
    return _checksum(<const unsigned char *>PyBytes_AS_STRING(data), PyBytes_GET_SIZE(data), value)
