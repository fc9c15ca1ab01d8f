"""The benchmark peers' events: the ~450-byte JSON event line of `BrokerBenchmarks.makeEvents`, an `update` of one
of 1000 items of `articles`, id PREFIX_<index, 8 digits>."""

BODY = "lorem ipsum " * 22


def bench_event(prefix: str, index: int) -> tuple[str, str, str]:
    """(event id, item key, event line) of event `index`."""
    key = f"item-{index % 1000}"
    event_id = f"{prefix}_{index:08d}"
    line = (f'{{"id":"{event_id}","type":"directus.items.update","collection":"articles","event":"update",'
            f'"key":"{key}","seq":{index},"data":{{"id":"{key}","title":"Article {index}",'
            f'"body":"{BODY}","tags":["a","b"],"rating":4.5,"draft":null}}}}')
    return event_id, key, line
