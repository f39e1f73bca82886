"""tests/e2e/lib/wsecho.py ADDRESS PORT CERT KEY LOG: a WebSocket server
over TLS (python3-websockets) for tests/e2e/tls-websocket.sh. Each
handshake is written to LOG as "PATH auth=[Authorization]
ext=[Sec-WebSocket-Extensions]"; /tell-auth sends back the Authorization
it got (a host that echoes a credential), every other path echoes each
message."""
import asyncio
import ssl
import sys

import websockets


async def serve(address, port, cert, key, log):
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(cert, key)

    async def handler(ws, path=None):
        path = ws.path
        auth = ws.request_headers.get("Authorization", "")
        ext = ws.request_headers.get("Sec-WebSocket-Extensions", "")
        with open(log, "a") as f:
            f.write("%s auth=[%s] ext=[%s]\n" % (path, auth, ext))
        if path == "/tell-auth":
            await ws.send("auth=" + auth)
            await asyncio.sleep(2)
            return
        async for message in ws:
            await ws.send(message)

    async with websockets.serve(handler, address, port, ssl=tls, max_size=None):
        await asyncio.Future()


asyncio.run(serve(sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]))
