"""wsclient.py echo|tell|status|say URL [TEXT]: a WebSocket client (python3-websockets)
run inside a sandbox by tests/e2e/tls-websocket.sh, with the token of
$WS_TOKEN in Authorization when it is set.
  echo    sends "hello" and 200 KiB of bytes; prints what came back
          ("hello", "bulk ok" or "bulk differs") and the extensions agreed
  tell    prints the first message, or "closed" when the connection ended
  status  prints the handshake's refusal ("status NNN") or "open"
  say     sends TEXT, prints what came back within 5 s, or "timeout"
"""
import asyncio
import os
import sys

import websockets


async def main(what, url, text=None):
    token = os.environ.get("WS_TOKEN")
    headers = {"Authorization": "Bearer " + token} if token else {}
    try:
        async with websockets.connect(url, extra_headers=headers, max_size=None,
                                      open_timeout=5) as ws:
            if what == "status":
                print("open")
            elif what == "say":
                await ws.send(text)
                try:
                    print(await asyncio.wait_for(ws.recv(), 5))
                except asyncio.TimeoutError:
                    print("timeout")
            elif what == "tell":
                try:
                    print(await asyncio.wait_for(ws.recv(), 5))
                except websockets.ConnectionClosed:
                    print("closed")
            else:
                await ws.send("hello")
                print(await ws.recv())
                bulk = bytes(range(256)) * 800
                await ws.send(bulk)
                print("bulk ok" if await ws.recv() == bulk else "bulk differs")
                print("ext=[%s]" % ws.response_headers.get("Sec-WebSocket-Extensions", ""))
    except websockets.InvalidStatusCode as e:
        print("status %d" % e.status_code)


asyncio.run(main(*sys.argv[1:4]))
