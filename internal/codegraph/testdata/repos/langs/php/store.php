<?php

namespace Acme\Store;

const VERSION = "1.0";

interface Getter
{
    public function get(string $key): ?string;
}

class Store implements Getter
{
    private array $items = [];

    public function get(string $key): ?string
    {
        return $this->items[$key] ?? null;
    }

    public function put(string $key, string $value): void
    {
        $this->items[$key] = normalize($value);
    }
}

function normalize(string $value): string
{
    return trim($value);
}

function main(): void
{
    $store = new Store();
    $store->put("a", " b ");
    echo $store->get("a");
}
