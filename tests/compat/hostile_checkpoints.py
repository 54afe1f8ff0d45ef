"""Crafted checkpoint files that once crashed, over-read or exhausted the readers (issue 28), built byte by byte
without torch or TensorFlow: torch.save archives (a stored zip holding ARCHIVE/data.pkl and its storages), TF1
index tables and safetensors headers. test_hostile_checkpoints.py runs the tools on them; tests/fuzz/seed_corpora.sh
writes them as seeds for the fuzz targets:

    python3 tests/compat/hostile_checkpoints.py OUT     # OUT/fuzz_torch_save/*.pt, fuzz_tf_index/, fuzz_safetensors/

Each case is (file name, bytes, a regular expression the tool's one-line error must match).
"""
import os
import struct
import sys
import zlib

# --- torch.save: a stored zip and a pickle written opcode by opcode -------------------------------------------------


def zip_archive(entries, local_offset_override=None):
    """A zip of stored entries [(name, bytes)], as torch.save writes them. local_offset_override: {name: offset} puts
    that 64-bit offset in a zip64 extra field of the entry's directory record (0xffffffff in the 32-bit field)."""
    out, directory = b"", b""
    for name, data in entries:
        raw_name = name.encode()
        crc = zlib.crc32(data)
        local = len(out)
        out += struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 0, 0, 0, crc, len(data), len(data), len(raw_name), 0)
        out += raw_name + data
        extra, offset_field = b"", local
        if local_offset_override and name in local_offset_override:
            extra = struct.pack("<HHQ", 1, 8, local_offset_override[name])
            offset_field = 0xFFFFFFFF
        directory += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, 0, 0, 0, crc, len(data), len(data),
                                 len(raw_name), len(extra), 0, 0, 0, 0, offset_field) + raw_name + extra
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(entries), len(entries), len(directory), len(out), 0)
    return out + directory + end


def p_int(v):
    if 0 <= v < 256:
        return b"K" + bytes([v])
    return b"\x8a\x08" + struct.pack("<q", v)


def p_str(s):
    raw = s.encode() if isinstance(s, str) else s
    return b"X" + struct.pack("<I", len(raw)) + raw


def p_tensor(storage_key, numel, offset, sizes, strides, storage_type=b"FloatStorage"):
    """torch._utils._rebuild_tensor_v2(storage, offset, sizes, strides, requires_grad, hooks), the storage as the
    persistent id ('storage', torch.FloatStorage, key, 'cpu', numel)."""
    pid = b"(" + p_str("storage") + b"ctorch\n" + storage_type + b"\n" + p_str(storage_key) + p_str("cpu") + \
        p_int(numel) + b"tQ"
    return (b"ctorch._utils\n_rebuild_tensor_v2\n(" + pid + p_int(offset) + b"(" + b"".join(map(p_int, sizes)) +
            b"t(" + b"".join(map(p_int, strides)) + b"t\x89ccollections\nOrderedDict\n)Rt" + b"R")


def state_dict_pickle(tensors):
    """A protocol-2 pickle of {name: tensor, ...}; tensors: [(name, p_tensor bytes)]."""
    return b"\x80\x02}(" + b"".join(p_str(name) + t for name, t in tensors) + b"u."


def torch_save(pickle, storages=(), archive="archive", byteorder=b"little", **zip_options):
    entries = [(f"{archive}/data.pkl", pickle)]
    if byteorder is not None:
        entries.append((f"{archive}/byteorder", byteorder))
    entries += [(f"{archive}/data/{key}", data) for key, data in storages]
    entries.append((f"{archive}/version", b"3\n"))
    return zip_archive(entries, **zip_options)


FOUR_FLOATS = struct.pack("<4f", 1, 2, 3, 4)


def one_tensor(offset, sizes, strides, name="w", storage_type=b"FloatStorage"):
    """A state dict of one tensor `name` viewing a 16-byte storage (four floats, or two doubles)."""
    numel = 2 if storage_type == b"DoubleStorage" else 4
    return torch_save(state_dict_pickle([(name, p_tensor("0", numel, offset, sizes, strides, storage_type))]),
                      [("0", FOUR_FLOATS)])


def torch_save_cases():
    past = r"tensor w: its elements \(storage offset \d+\) run past its storage of 16 bytes"
    wraps = r"tensor w: its (sizes and strides|storage offset \d+ and strides) reach past any storage"
    nested_lists = b"\x80\x02" + b"]" * 1_000_000 + b"a" * 999_999 + b"."
    nested_dicts = b"\x80\x02}" + b"K\x00}" * 300_000 + b"s" * 300_000 + b"."
    return [
        # 1. Offsets and strides whose byte extent wraps in 64-bit arithmetic, so that the old check passed: 16
        # floats from 2^62 - 16 end at byte 2^64 = 0 (memcpy read before the buffer); one from 2^62 was read from
        # offset 0; three doubles 2^61 apart end at byte 8 (memcpy crashed).
        ("offset-2p62-minus-16.pt", one_tensor(2**62 - 16, [16], [1]), wraps),
        ("offset-2p62.pt", one_tensor(2**62, [1], [1]), wraps),
        ("stride-2p61.pt", one_tensor(0, [3], [2**61], storage_type=b"DoubleStorage"), wraps),
        ("offset-2p63-minus-1.pt", one_tensor(2**63 - 1, [2], [1]), wraps),
        ("offset-2p40.pt", one_tensor(2**40, [1], [1]), past),
        ("stride-2p40.pt", one_tensor(0, [2, 2], [2**40, 1]), past),
        ("stride-2p62-size-2p62.pt", one_tensor(0, [2**62, 4], [2**62, 1]), wraps),
        ("negative-offset.pt", one_tensor(-4, [1], [1]), r"tensor w: a negative storage offset -4"),
        ("negative-stride.pt", one_tensor(3, [2], [-1]), r"tensor w: a negative size or stride"),
        ("overlapping-strides.pt", one_tensor(0, [1000, 4], [0, 1]), r"tensor w: 4000 elements from a storage of 4"),
        # 2. Nesting deep enough to overflow a recursive destructor.
        ("nested-lists.pt", torch_save(nested_lists), r"data\.pkl at byte \d+: the pickle builds more than|holds no dict"),
        ("nested-dicts.pt", torch_save(nested_dicts), r"data\.pkl at byte \d+: the pickle builds more than|holds no dict"),
        # 3. Five million empty dicts: a few bytes each, a large object each.
        ("empty-dicts.pt", torch_save(b"\x80\x02" + b"}" * 5_000_000 + b"."),
         r"data\.pkl at byte \d+: the pickle builds more than \d+ MB of objects"),
        # 4. A byte order that is neither; a key of a million characters; a local header offset past 2^64 - 30.
        ("byteorder-middle.pt", torch_save(state_dict_pickle([("w", p_tensor("0", 4, 0, [4], [1]))]),
                                           [("0", FOUR_FLOATS)], byteorder=b"middle"),
         r"archive/byteorder says 'middle', neither little nor big"),
        ("million-character-key.pt", one_tensor(-1, [1], [1], name="k" * 1_000_000),
         r"tensor k{20,}\.\.\. \(1000000 bytes\): a negative storage offset"),
        ("local-offset-2p64.pt", torch_save(state_dict_pickle([]), local_offset_override={"archive/data.pkl": 2**64 - 10}),
         r"entry archive/data\.pkl: no local header"),
        ("storage-type-escape.pt",
         torch_save(state_dict_pickle([("w", p_tensor("0", 4, 0, [4], [1], storage_type=b"Evil\x1b[2JStorage"))]),
                    [("0", FOUR_FLOATS)]),
         r"storage type torch\.Evil\\x1b\[2JStorage is not one bertkit reads"),
    ]


# --- TF1 index: a LevelDB table of uncompressed blocks -------------------------------------------------------------

def _crc32c_table():
    table = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_CRC32C = _crc32c_table()


def crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c = _CRC32C[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def masked_crc32c(data):
    c = crc32c(data)
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def varint(v):
    out = b""
    v &= (1 << 64) - 1
    while v >= 0x80:
        out += bytes([(v & 0x7F) | 0x80])
        v >>= 7
    return out + bytes([v])


def block(entries):
    """A block without prefix compression: one restart point per entry."""
    out, restarts = b"", []
    for key, value in entries:
        restarts.append(len(out))
        out += varint(0) + varint(len(key)) + varint(len(value)) + key + value
    restarts = restarts or [0]
    return out + b"".join(struct.pack("<I", r) for r in restarts) + struct.pack("<I", len(restarts))


def leveldb_table(entries):
    """entries: sorted [(key bytes, value bytes)] -> a table whose one data block holds them all."""
    file = b""

    def add(contents):
        nonlocal file
        handle = varint(len(file)) + varint(len(contents))
        file += contents + b"\x00" + struct.pack("<I", masked_crc32c(contents + b"\x00"))
        return handle

    data = add(block(entries))
    last_key = entries[-1][0] if entries else b""
    index = add(block([(last_key, data)]))
    meta = add(block([]))
    footer = (meta + index).ljust(40, b"\x00") + struct.pack("<Q", 0xDB4775248B80FB57)
    return file + footer


def tensor_entry(dtype=1, dims=(4,), shard=0, offset=0, size=16):
    shape = b"".join(b"\x12" + varint(len(d)) + d for d in (b"\x08" + varint(n) for n in dims))
    return (b"\x08" + varint(dtype) + b"\x12" + varint(len(shape)) + shape + b"\x18" + varint(shard) +
            b"\x20" + varint(offset) + b"\x28" + varint(size))


def tf_index(num_shards=1, tensors=((b"bert/embeddings/LayerNorm/beta", {}),)):
    header = b"\x08" + varint(num_shards) + b"\x10\x00"
    return leveldb_table([(b"", header)] + sorted((name, tensor_entry(**fields)) for name, fields in tensors))


def tf_index_cases():
    """(name, index bytes, expected error); the data shard beside each is 16 zero bytes."""
    return [
        ("shard-count-2p40.index", tf_index(num_shards=2**40), r"bundle header at byte \d+: shard count 1099511627776 is out of range"),
        ("shard-id-2p63.index", tf_index(tensors=[(b"w", {"shard": 2**63})]),
         r"tensor w at byte \d+: shard id -9223372036854775808 is out of range"),
        ("million-character-key.index", tf_index(tensors=[(b"k" * 1_000_000, {"dtype": 99})]),
         r"tensor k{20,}\.\.\. \(1000000 bytes\): unknown dtype 99"),
    ]


# --- safetensors: binary bytes in the header ------------------------------------------------------------------------

def safetensors_cases():
    binary = b'{"a":\x1b[2J\xff\x00}'
    return [("binary-header.safetensors", struct.pack("<Q", len(binary)) + binary,
             r"header: malformed JSON at byte \d+ \([^\x00-\x1f\x7f]*\)$")]


def write_seeds(out):
    for folder, cases in (("fuzz_torch_save", torch_save_cases()), ("fuzz_tf_index", tf_index_cases()),
                          ("fuzz_safetensors", safetensors_cases())):
        os.makedirs(os.path.join(out, folder), exist_ok=True)
        for name, data, _ in cases:
            with open(os.path.join(out, folder, "hostile-" + name), "wb") as f:
                f.write(data)


if __name__ == "__main__":
    write_seeds(sys.argv[1])
