// Prints Flink's key group of keys: for each input line "MAX_PARALLELISM TERM", the line
// "HASHCODE KEY_GROUP", from key.hashCode() and KeyGroupRangeAssignment.assignToKeyGroup.
//
//   java KeyGroups INPUT OUTPUT
//
// TERM (no spaces): S<4 hex digits per UTF-16 code unit> String | I<decimal> Integer |
// L<decimal> Long | H<decimal> Short | B<decimal> Byte | Z1 / Z0 Boolean | C<4 hex> Character |
// D<16 hex: raw bits> Double | F<8 hex: raw bits> Float | N null (a tuple field) |
// T[TERM;TERM;...] a Flink Tuple of that arity (Tuple1..Tuple25; T[] is Tuple0).

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;

import org.apache.flink.api.java.tuple.Tuple;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;

public class KeyGroups {

    static int at;

    static Object parse(String s) {
        char kind = s.charAt(at++);
        if (kind == 'N') {
            return null;
        }
        if (kind == 'T') {
            if (s.charAt(at++) != '[') {
                throw new IllegalArgumentException("expected [ at " + at + " in " + s);
            }
            List<Object> fields = new ArrayList<>();
            if (s.charAt(at) == ']') {
                at++;
            } else {
                while (true) {
                    fields.add(parse(s));
                    char c = s.charAt(at++);
                    if (c == ']') {
                        break;
                    }
                    if (c != ';') {
                        throw new IllegalArgumentException("expected ; or ] at " + at + " in " + s);
                    }
                }
            }
            try {
                Tuple t = Tuple.getTupleClass(fields.size()).getDeclaredConstructor().newInstance();
                for (int i = 0; i < fields.size(); i++) {
                    t.setField(fields.get(i), i);
                }
                return t;
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException(e);
            }
        }
        int end = at;
        while (end < s.length() && s.charAt(end) != ';' && s.charAt(end) != ']') {
            end++;
        }
        String body = s.substring(at, end);
        at = end;
        switch (kind) {
            case 'S': {
                StringBuilder sb = new StringBuilder();
                for (int i = 0; i < body.length(); i += 4) {
                    sb.append((char) Integer.parseInt(body.substring(i, i + 4), 16));
                }
                return sb.toString();
            }
            case 'I': return Integer.parseInt(body);
            case 'L': return Long.parseLong(body);
            case 'H': return Short.parseShort(body);
            case 'B': return Byte.parseByte(body);
            case 'Z': return body.equals("1");
            case 'C': return (char) Integer.parseInt(body, 16);
            case 'D': return Double.longBitsToDouble(Long.parseUnsignedLong(body, 16));
            case 'F': return Float.intBitsToFloat(Integer.parseUnsignedInt(body, 16));
            default: throw new IllegalArgumentException("unknown term " + kind + " in " + s);
        }
    }

    public static void main(String[] args) throws Exception {
        StringBuilder out = new StringBuilder();
        for (String line : Files.readAllLines(Paths.get(args[0]), StandardCharsets.UTF_8)) {
            if (line.isEmpty()) {
                continue;
            }
            int space = line.indexOf(' ');
            int maxp = Integer.parseInt(line.substring(0, space));
            String term = line.substring(space + 1);
            at = 0;
            Object key = parse(term);
            if (at != term.length()) {
                throw new IllegalArgumentException("trailing text in " + term);
            }
            out.append(key.hashCode()).append(' ')
                    .append(KeyGroupRangeAssignment.assignToKeyGroup(key, maxp)).append('\n');
        }
        Files.write(Paths.get(args[1]), out.toString().getBytes(StandardCharsets.UTF_8));
    }
}
