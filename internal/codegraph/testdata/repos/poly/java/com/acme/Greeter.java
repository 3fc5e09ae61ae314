package com.acme;

public class Greeter implements Named {
    public static final String HELLO = "hello";
    private final String name;

    public Greeter(String name) {
        this.name = name;
    }

    @Override
    public String name() {
        return name;
    }

    public String greet() {
        return HELLO + " " + name();
    }

    public static void main(String[] args) {
        Greeter g = new Greeter("x");
        System.out.println(g.greet());
    }
}

interface Named {
    String name();
}
