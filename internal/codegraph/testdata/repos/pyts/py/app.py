from .base import Widget, helper


class Cache:
    def get(self, key):
        return key

    def label(self):
        return "cache"


def main():
    w = Widget()
    w.show()
    helper({})
