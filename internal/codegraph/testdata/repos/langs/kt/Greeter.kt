package com.acme

const val PREFIX = "Hello, "

interface Greeting {
    fun greet(name: String): String
}

class Greeter(private val formatter: Formatter) : Greeting {
    override fun greet(name: String): String {
        return formatter.format(PREFIX + name)
    }
}

class Formatter {
    fun format(text: String): String = text.trim()
}

object Registry {
    val greeter = Greeter(Formatter())
}

fun main() {
    val greeter = Greeter(Formatter())
    println(greeter.greet("world"))
}
