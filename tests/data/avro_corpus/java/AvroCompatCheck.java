// Runs Avro Java's own SchemaCompatibility and resolving reader over reader/writer pairs, for
// tests/reference/test_avro_java.py. Input: one pair per line, tab-separated: id, writer schema
// JSON, reader schema JSON, hex of a datum written with the writer schema (or empty).
// Output per pair: id, COMPATIBLE|INCOMPATIBLE, incompatibilities as TYPE@location joined by
// '|', and the hex of the datum read with (writer, reader) and written with the reader schema
// (or '-'); an exception gives id and ERROR:<class>:<message>.
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;

import org.apache.avro.Schema;
import org.apache.avro.SchemaCompatibility;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.generic.GenericDatumWriter;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.io.EncoderFactory;

public class AvroCompatCheck {
    public static void main(String[] args) throws Exception {
        for (String line : Files.readAllLines(Paths.get(args[0]), StandardCharsets.UTF_8)) {
            String[] parts = line.split("\t", -1);
            StringBuilder out = new StringBuilder(parts[0]).append('\t');
            try {
                Schema writer = new Schema.Parser().parse(parts[1]);
                Schema reader = new Schema.Parser().parse(parts[2]);
                SchemaCompatibility.SchemaPairCompatibility result =
                        SchemaCompatibility.checkReaderWriterCompatibility(reader, writer);
                out.append(result.getType()).append('\t');
                List<String> found = new ArrayList<>();
                for (SchemaCompatibility.Incompatibility i : result.getResult().getIncompatibilities()) {
                    found.add(i.getType() + "@" + i.getLocation());
                }
                out.append(String.join("|", found)).append('\t');
                if (!parts[3].isEmpty()
                        && result.getType() == SchemaCompatibility.SchemaCompatibilityType.COMPATIBLE) {
                    GenericDatumReader<Object> datumReader = new GenericDatumReader<>(writer, reader);
                    Object value = datumReader.read(null,
                            DecoderFactory.get().binaryDecoder(unhex(parts[3]), null));
                    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
                    BinaryEncoder encoder = EncoderFactory.get().binaryEncoder(bytes, null);
                    new GenericDatumWriter<Object>(reader).write(value, encoder);
                    encoder.flush();
                    out.append(hex(bytes.toByteArray()));
                } else {
                    out.append('-');
                }
            } catch (Exception e) {
                out.setLength(parts[0].length() + 1);
                out.append("ERROR:").append(e.getClass().getSimpleName()).append(':')
                        .append(String.valueOf(e.getMessage()).replace('\t', ' ').replace('\n', ' '));
            }
            System.out.println(out);
        }
    }

    private static byte[] unhex(String text) {
        byte[] data = new byte[text.length() / 2];
        for (int i = 0; i < data.length; i++) {
            data[i] = (byte) Integer.parseInt(text.substring(2 * i, 2 * i + 2), 16);
        }
        return data;
    }

    private static String hex(byte[] data) {
        StringBuilder text = new StringBuilder();
        for (byte b : data) {
            text.append(String.format("%02x", b & 0xff));
        }
        return text.toString();
    }
}
