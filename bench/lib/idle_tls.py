"""Idle TLS keep-alive connections and what they cost a server.

    idle_tls.py HOST PORT COUNT http1|h2 PATH LABEL PID...

Opens COUNT TLS connections to HOST:PORT one after the other (ALPN
http/1.1 or h2), asks each for PATH once and reads the whole answer,
keeps them all open, waits 5 s, and prints the server's anonymous
resident memory (RssAnon, summed over the PIDs) before and after, per
connection. bench/settings.sh runs it (row 8).
"""

import socket
import ssl
import sys
import time

import h2.config
import h2.connection
import h2.events


def rss_anon_kib(pids):
    total = 0
    for pid in pids:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("RssAnon:"):
                    total += int(line.split()[1])
    return total


def one_request_http1(tls, host, path):
    tls.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}\r\nAccept-Encoding: gzip, br\r\n\r\n".encode())
    got = b""
    while b"\r\n\r\n" not in got:
        got += tls.recv(65536)
    head, body = got.split(b"\r\n\r\n", 1)
    length = next(
        int(line.split(b":")[1])
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length")
    )
    while len(body) < length:
        body += tls.recv(65536)


def one_request_h2(tls, host, path):
    conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
    conn.initiate_connection()
    headers = [(":method", "GET"), (":path", path), (":scheme", "https"),
               (":authority", host), ("accept-encoding", "gzip, br")]
    conn.send_headers(1, headers, end_stream=True)
    tls.sendall(conn.data_to_send())
    done = False
    while not done:
        for event in conn.receive_data(tls.recv(65536)):
            if isinstance(event, h2.events.DataReceived):
                conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
            if isinstance(event, h2.events.StreamEnded):
                done = True
        tls.sendall(conn.data_to_send())


def main():
    host, port, count, proto, path, label = sys.argv[1:7]
    pids = [int(p) for p in sys.argv[7:]]
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    context.set_alpn_protocols(["h2"] if proto == "h2" else ["http/1.1"])
    before = rss_anon_kib(pids)
    held = []
    for _ in range(int(count)):
        raw = socket.create_connection((host, int(port)))
        tls = context.wrap_socket(raw, server_hostname="localhost")
        if proto == "h2":
            one_request_h2(tls, host, path)
        else:
            one_request_http1(tls, host, path)
        held.append(tls)
    time.sleep(5)
    after = rss_anon_kib(pids)
    each = (after - before) * 1024 / int(count)
    print(f"{label} {proto}: {count} idle TLS connections: RssAnon {before} -> {after} KiB, {each:.0f} B each")


if __name__ == "__main__":
    main()
