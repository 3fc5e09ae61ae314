class Base:
    def render(self):
        return "base"


class Widget(Base):
    def show(self):
        return self.render()


def helper(store):
    store.get("k")
    return store.label
