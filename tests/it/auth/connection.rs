//! A refusal keeps the connection usable: the `401` a client gets before it has a token is
//! answered after its body is read, so the retry with a token goes out on the same
//! connection (the Python SDK's httpx sends headers and body in separate writes and reuses
//! the connection; before, the server closed it under it).

use std::time::Duration;

use serde_json::json;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

use super::{protected, request};
use crate::support::checked_messages;

/// One HTTP/1.1 POST of `body`, its head and body written separately with a pause between.
async fn post_in_two_writes(
    stream: &mut TcpStream,
    host: &str,
    headers: &[(String, String)],
    body: &str,
) {
    let mut head = format!(
        "POST /mcp HTTP/1.1\r\nhost: {host}\r\ncontent-length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.flush().await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    stream.write_all(body.as_bytes()).await.unwrap();
}

/// Reads one response (`content-length` framed, as the refusals and JSON answers are):
/// the status, the lower-cased head, the body.
async fn read_response(stream: &mut TcpStream) -> (u16, String, String) {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        let n = tokio::time::timeout(Duration::from_secs(10), stream.read(&mut chunk))
            .await
            .expect("a response within 10 s")
            .unwrap();
        assert!(n > 0, "the server closed the connection before answering");
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_ascii_lowercase();
    let status: u16 = head[9..12].parse().unwrap();
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .map(|v| v.trim().parse().unwrap())
        .expect("a content-length");
    while buf.len() < head_end + length {
        let n = stream.read(&mut chunk).await.unwrap();
        assert!(n > 0, "the connection closed inside a body");
        buf.extend_from_slice(&chunk[..n]);
    }
    let body = String::from_utf8_lossy(&buf[head_end..head_end + length]).into_owned();
    (status, head, body)
}

#[tokio::test]
async fn the_retry_with_a_token_goes_out_on_the_connection_that_got_the_401() {
    let p = protected(|b| b).await;
    let token = p.token("mcp files:read");
    let mut stream = TcpStream::connect(p.server.addr).await.unwrap();
    let host = format!("localhost:{}", p.server.addr.port());

    let (headers, body) = request("tools/list", json!({}));
    post_in_two_writes(&mut stream, &host, &headers, &body).await;
    let (status, head, _) = read_response(&mut stream).await;
    assert_eq!(status, 401, "{head}");
    assert!(!head.contains("connection: close"), "{head}");

    let (mut headers, body) = request("tools/list", json!({}));
    headers.push(("authorization".into(), format!("Bearer {token}")));
    post_in_two_writes(&mut stream, &host, &headers, &body).await;
    let (status, head, body) = read_response(&mut stream).await;
    assert_eq!(status, 200, "{head}{body}");
    let content_type = head
        .lines()
        .find_map(|l| l.strip_prefix("content-type:"))
        .unwrap()
        .trim()
        .to_owned();
    let messages = checked_messages(&content_type, &body, Some("tools/list"));
    assert!(messages[0]["result"]["tools"].is_array(), "{body}");
}
