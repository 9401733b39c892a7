"""A minimal Redis client for the harness's probes (one command per connection): enough
RESP to ask a sentinel which primary it names and an instance which role it has."""

import socket


class RedisError(Exception):
    pass


def command(host, port, *args, timeout=1.0):
    """The reply to one command: str, int, None, a list, or RedisError for an error reply.
    Raises OSError when the instance cannot be reached or does not answer in time."""
    with socket.create_connection((host, port), timeout=timeout) as connection:
        connection.settimeout(timeout)
        request = f"*{len(args)}\r\n".encode()
        for arg in args:
            data = str(arg).encode()
            request += f"${len(data)}\r\n".encode() + data + b"\r\n"
        connection.sendall(request)
        reader = connection.makefile("rb")
        return parse(reader)


def parse(reader):
    line = reader.readline()
    if not line.endswith(b"\r\n"):
        raise OSError("connection closed mid-reply")
    kind, body = line[:1], line[1:-2].decode()
    if kind == b"+":
        return body
    if kind == b"-":
        return RedisError(body)
    if kind == b":":
        return int(body)
    if kind == b"$":
        length = int(body)
        if length < 0:
            return None
        data = reader.read(length + 2)
        return data[:-2].decode()
    if kind == b"*":
        count = int(body)
        return None if count < 0 else [parse(reader) for _ in range(count)]
    raise OSError(f"unexpected reply {line!r}")
