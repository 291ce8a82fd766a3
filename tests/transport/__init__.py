"""The transports (paysdk._transport) over real loopback sockets and hostile servers."""
