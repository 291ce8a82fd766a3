"""Client and AsyncClient (paysdk._client) through their public surface."""
