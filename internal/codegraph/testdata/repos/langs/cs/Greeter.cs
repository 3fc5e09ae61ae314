using System;

namespace Acme.Greeting
{
    public interface IGreeter
    {
        string Greet(string name);
    }

    public class Greeter : IGreeter
    {
        private const string Prefix = "Hello, ";
        private readonly Formatter formatter = new Formatter();

        public string Greet(string name)
        {
            return formatter.Format(Prefix + name);
        }
    }

    public class Formatter
    {
        public string Format(string text) => text.Trim();
    }

    public enum Mood { Happy, Sad }

    public static class Program
    {
        public static void Main()
        {
            var greeter = new Greeter();
            Console.WriteLine(greeter.Greet("world"));
        }
    }
}
