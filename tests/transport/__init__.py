"""The transports (paysdk._transport): the loops, the httpx and aiohttp senders, deadlines."""
