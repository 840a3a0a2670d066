"""physd_client._batch_wire - StepBatch requests and BatchFrame replies on the wire without
per-element Python work (protocol 1.9; Client.step_batch uses it).

Encode: protobuf serialises the StepBatch without its ``ctrl``; the controls are appended as
one packed-double field whose payload is the raw little-endian bytes of the array (numpy's
``tobytes``; ``struct.pack`` of a list), and the Envelope around it (req_id, step_batch) is
written here. Decode: the reply Envelope and its BatchFrame are scanned field by field (a
handful of top-level fields; the big packed fields are skipped by their length), the four
packed double arrays become numpy arrays viewing the frame's own buffer (``array.array('d')``
copies without numpy), and protobuf parses the small rest (worlds, step, sim_time_ns, status,
nq, nv, message, unknown fields). A frame of any other shape (an Error, another reply, an
unknown Envelope field, a double array sent unpacked or in pieces, bad wire data) is not
decoded here: the caller parses it whole with protobuf, as for every other request.

Field numbers come from the generated descriptors (physd_pb2), never written down here.
"""
import array
import struct
import sys

try:  # optional: without numpy the arrays are array.array('d')
    import numpy as _np
except ImportError:  # pragma: no cover - exercised by the tests with numpy hidden
    _np = None

_LITTLE = sys.byteorder == "little"
_WT_VARINT, _WT_I64, _WT_LEN, _WT_I32 = 0, 1, 2, 5

# the BatchFrame fields that are packed doubles (decoded as arrays)
DOUBLE_FIELDS = ("qpos", "qvel", "actuator_force", "sensor_values")


class Malformed(Exception):
    """Wire data the scanner does not accept (the caller falls back to protobuf)."""


def varint(v):
    """The base-128 varint of a non-negative int."""
    out = bytearray()
    while v > 0x7F:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def _read_varint(buf, pos, end):
    result = shift = 0
    while True:
        if pos >= end:
            raise Malformed("truncated varint")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise Malformed("varint too long")


def scan(buf, pos, end):
    """Yield (number, wire type, field start, value start, field end, varint value or None)
    for each field of buf[pos:end]; Malformed on groups or data past end."""
    while pos < end:
        start = pos
        key, pos = _read_varint(buf, pos, end)
        num, wt = key >> 3, key & 7
        value = None
        vstart = pos
        if wt == _WT_VARINT:
            value, pos = _read_varint(buf, pos, end)
        elif wt == _WT_LEN:
            n, pos = _read_varint(buf, pos, end)
            vstart = pos
            pos += n
        elif wt == _WT_I64:
            pos += 8
        elif wt == _WT_I32:
            pos += 4
        else:
            raise Malformed("wire type %d" % wt)
        if num == 0 or pos > end:
            raise Malformed("bad field")
        yield num, wt, start, vstart, pos, value


def _int_list(name):
    """A BatchResult attribute: the parsed BatchFrame's repeated int field as a list, made on
    first use (most callers read one of the four, or none)."""
    def get(self):
        cache = self._lists
        if name not in cache:
            cache[name] = list(getattr(self._small, name))
        return cache[name]
    return property(get, doc="the BatchFrame's %s, a list of ints" % name)


class BatchResult:
    """Client.step_batch's result: the BatchFrame's fields by the same names. qpos, qvel,
    actuator_force and sensor_values are flat float64 numpy arrays (array.array('d') without
    numpy); worlds, step, sim_time_ns and status are lists of ints; nq, nv ints; message a
    str. It pickles (the parsed rest travels as its BatchFrame)."""

    __slots__ = ("_small", "_lists", "nq", "nv", "message") + DOUBLE_FIELDS
    worlds = _int_list("worlds")
    step = _int_list("step")
    sim_time_ns = _int_list("sim_time_ns")
    status = _int_list("status")

    def __init__(self, small, arrays):
        """small: a BatchFrame with the non-double fields; arrays: {name: array}."""
        self._small = small
        self._lists = {}
        self.nq = small.nq
        self.nv = small.nv
        self.message = small.message
        for name in DOUBLE_FIELDS:
            setattr(self, name, arrays[name])

    def __repr__(self):
        return "BatchResult(worlds=%d, nq=%d, nv=%d, message=%r)" % (len(self._small.worlds),
                                                                      self.nq, self.nv,
                                                                      self.message)


def _empty():
    return _np.zeros(0) if _np is not None else array.array("d")


def _doubles(buf, start, stop):
    """The packed doubles of buf[start:stop] (a view of buf with numpy; writable when buf is a
    bytearray)."""
    if _np is not None:
        return _np.frombuffer(buf, dtype="<f8", count=(stop - start) // 8, offset=start)
    a = array.array("d")
    a.frombytes(buf[start:stop])
    if not _LITTLE:
        a.byteswap()
    return a


def from_message(frame):
    """A BatchResult from a parsed BatchFrame (the fallback path): its arrays copied."""
    arrays = {}
    for name in DOUBLE_FIELDS:
        values = getattr(frame, name)
        arrays[name] = (_np.array(values, dtype=_np.float64) if _np is not None
                        else array.array("d", values))
    return BatchResult(frame, arrays)


class Wire:
    """The field numbers of one physd_pb2 module and the encoder / decoder built on them."""

    def __init__(self, pb):
        self.pb = pb
        env = pb.Envelope.DESCRIPTOR.fields_by_name
        self.req_id = env["req_id"].number
        self.step_batch = env["step_batch"].number
        self.batch_frame = env["batch_frame"].number
        frame = pb.BatchFrame.DESCRIPTOR.fields_by_name
        self.doubles = {frame[name].number: name for name in DOUBLE_FIELDS}
        self._req_key = varint(self.req_id << 3 | _WT_VARINT)
        self._sb_key = varint(self.step_batch << 3 | _WT_LEN)
        self._ctrl_key = varint(pb.StepBatch.DESCRIPTOR.fields_by_name["ctrl"].number << 3
                                | _WT_LEN)

    # ---- encode ------------------------------------------------------------------------------

    @staticmethod
    def ctrl_bytes(ctrl):
        """ctrl (a flat sequence of numbers, or an array of shape (worlds, nu), read in C
        order) as little-endian doubles; values are not checked here (the server refuses
        non-finite ones and a wrong count)."""
        if isinstance(ctrl, (str, bytes, bytearray, memoryview)):
            raise TypeError("ctrl must be numbers, not %s" % type(ctrl).__name__)
        if hasattr(ctrl, "ravel") or hasattr(ctrl, "__array__"):
            if _np is not None:
                a = _np.asarray(ctrl)
                if a.dtype.kind not in "biuf":
                    raise TypeError("ctrl must be numbers, not an array of %s" % a.dtype)
                return a.astype("<f8", copy=False).tobytes()
            ctrl = ctrl.ravel().tolist()
        values = ctrl if isinstance(ctrl, (list, tuple)) else list(ctrl)
        try:  # struct packs a list of floats faster than array.array('d') or numpy take it
            return struct.pack("<%dd" % len(values), *values)
        except struct.error as e:
            raise TypeError("ctrl must be numbers: %s" % e)

    def request(self, req_id, step_batch_bytes, ctrl):
        """The Envelope bytes of a StepBatch: step_batch_bytes (serialised without ctrl) plus
        ctrl (little-endian double bytes, b"" for none) under req_id."""
        parts = [step_batch_bytes]
        if ctrl:
            parts += [self._ctrl_key, varint(len(ctrl)), ctrl]
        sb_len = sum(len(p) for p in parts)
        return b"".join([self._req_key, varint(req_id), self._sb_key, varint(sb_len)] + parts)

    # ---- decode ------------------------------------------------------------------------------

    def reply(self, buf, req_id):
        """The BatchResult of the Envelope in buf (bytes or bytearray: the arrays view it, so
        it must not change afterwards) when it is the BatchFrame answering req_id and has the
        expected shape; else None (parse it with protobuf)."""
        try:
            rid = span = None
            for num, wt, _, vstart, stop, value in scan(buf, 0, len(buf)):
                if num == self.req_id and wt == _WT_VARINT and rid is None:
                    rid = value
                elif num == self.batch_frame and wt == _WT_LEN and span is None:
                    span = (vstart, stop)
                else:
                    return None
            if rid != req_id or span is None:
                return None
            arrays, rest = {}, []
            for num, wt, start, vstart, stop, _ in scan(buf, span[0], span[1]):
                name = self.doubles.get(num)
                if name is None:
                    rest.append((start, stop))
                elif wt != _WT_LEN or name in arrays or (stop - vstart) % 8:
                    return None  # unpacked, in pieces or ragged: protobuf's business
                else:
                    arrays[name] = _doubles(buf, vstart, stop)
        except Malformed:
            return None
        view = memoryview(buf)
        small = self.pb.BatchFrame()
        try:
            small.ParseFromString(b"".join(view[a:b] for a, b in rest))
        except Exception:  # protobuf's DecodeError: the whole parse reports it
            return None
        finally:
            view.release()
        for name in DOUBLE_FIELDS:
            if name not in arrays:
                arrays[name] = _empty()
        return BatchResult(small, arrays)

    def req_id_of(self, buf):
        """The Envelope's req_id from a scan of its top-level fields (the last one, as
        protobuf reads it; 0 when absent), or None when the scan does not accept the data."""
        rid = 0
        try:
            for num, wt, _, _, _, value in scan(buf, 0, len(buf)):
                if num == self.req_id:
                    if wt != _WT_VARINT:
                        return None
                    rid = value
        except Malformed:
            return None
        return rid
